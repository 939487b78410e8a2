"""Where pyarrow's memory comes from in a process that writes companions: pyarrow's jemalloc,
keeping the pages it frees for ``KEEP_MS`` before it gives them back to the system, rather than
pyarrow's default (mimalloc here), which gives them back at once.

Encoding a range's row group takes tens of MB for a moment (the moves' levels and dictionary
indices, a few bytes for each of their millions of values); pages given back are faulted in and
zeroed by the kernel again for the next group, which was a third to half of the encoding's CPU
time (``perf record``: ``clear_page`` under mimalloc's page allocation). Measured with the
companion benchmark's child (60,000 played games in two ranges, thread CPU of the encoding, a
loaded 2-core machine): 3.4-5.2 us a game against 6.1-7.1 with the default pool, the same peak
RSS. Pages kept 30 s serve the next ranges a worker runs and go back to the system when it is
idle."""

from __future__ import annotations

import functools

import pyarrow as pa

KEEP_MS = 30_000


@functools.cache
def use_kept_pages() -> None:
    """Make jemalloc, keeping freed pages ``KEEP_MS``, the process's pyarrow pool (once); where
    pyarrow was built without jemalloc, its default stays."""
    try:
        pool = pa.jemalloc_memory_pool()
    except NotImplementedError:
        return
    pa.jemalloc_set_decay_ms(KEEP_MS)
    pa.set_memory_pool(pool)
