"""The job queue's Redis edge: the arq connection, enqueueing with deterministic ids, the
snapshot of queued, running and finished jobs that operators see, and the worker's own keys."""
