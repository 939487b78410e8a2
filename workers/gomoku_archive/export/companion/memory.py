"""Where pyarrow's memory comes from in a process that writes companions: pyarrow's jemalloc
(chosen before pyarrow loads, by this package's ``__init__``), keeping the pages it frees for
``KEEP_MS`` before it gives them back to the system, where pyarrow's default would be mimalloc.

Encoding a range's row group takes tens of MB for a moment (the moves' levels and dictionary
indices, a few bytes for each of their millions of values); pages given back are faulted in and
zeroed by the kernel again for the next group (``perf record``: ``clear_page_erms``, under
huge-page faults with mimalloc, the largest single item of the companion's CPU). Measured on
two 30,000-game groups of played games encoded one after the other in a fresh process
(``GroupRows.encode`` in a thread, its ``time.thread_time``, a game; a loaded 2-core machine,
three runs each): mimalloc 3.0-8.5 us for the first group and 2.8-4.7 for the second; jemalloc
3.7-4.2 and 2.8-3.0 (2,400 page faults in the second); jemalloc keeping its pages 3.5-3.7 and
2.7-2.9 (120 page faults). Pages kept 30 s serve the next ranges a worker runs and go back to
the system when it is idle."""

from __future__ import annotations

import functools

import pyarrow as pa

KEEP_MS = 30_000


@functools.cache
def use_kept_pages() -> None:
    """Make jemalloc, keeping freed pages ``KEEP_MS``, the process's pyarrow pool (once; it is
    the default already unless pyarrow was loaded before this package); where pyarrow was built
    without jemalloc, its default stays."""
    try:
        pool = pa.jemalloc_memory_pool()
    except NotImplementedError:
        return
    pa.jemalloc_set_decay_ms(KEEP_MS)
    pa.set_memory_pool(pool)
