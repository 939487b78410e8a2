"""The job queue: job ids, the Redis edge, planning and the operators' view."""
