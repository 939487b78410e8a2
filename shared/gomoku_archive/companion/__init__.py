"""The Parquet companion of a month's archive: its schema, its rows (read from the archive's
lines) and its file names. Pure; the writer is ``export.companion``."""
