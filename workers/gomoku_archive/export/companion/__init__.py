"""The Parquet companion's writer (pyarrow): a range's rows from its lines (``columns``), its
row group encoded as a one-group file (``file_writer``) and stored as its part (``parts``), the
month's file joined from the parts or made from a stored archive (``build``), and the companion
of an archive published without one (``backfill``).

Importing the package chooses pyarrow's allocator before pyarrow loads (``memory``)."""

import os

# Read by pyarrow once, as it loads, and only then: every allocation of the Parquet writer,
# its encoders' own included (``pyarrow.set_memory_pool`` reaches only pyarrow's), from
# pyarrow's jemalloc rather than its default mimalloc, whose fresh huge pages the kernel zeroes
# as a group first touches them. Measured (``export.companion.memory`` has how): the first
# group a process encodes took 3.5-4.2 us a game, against 3.0-8.5 with mimalloc (over 6.5 in 5
# of 8 runs).
os.environ["ARROW_DEFAULT_MEMORY_POOL"] = "jemalloc"
