"""The Parquet companion's writer (pyarrow): a range's rows from its lines (``columns``), its
row group encoded as a one-group file (``file_writer``) and stored as its part (``parts``), the
month's file joined from the parts or made from a stored archive (``build``), and the companion
of an archive published without one (``backfill``)."""
