"""What the job queue's jobs are, decided without I/O: job ids, the JSON codec, which months to
plan, worker liveness and the operators' views of months and queue. Pure: the Redis edge that
reads and writes the queue is ``gomoku_archive.queue``."""
