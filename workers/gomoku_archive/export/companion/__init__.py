"""The Parquet companion's writer (pyarrow): a range's rows as an Arrow part (``columns``,
``parts``), the parts into one Parquet file in row groups of a fixed number of rows
(``file_writer``), and the build steps that store it beside its archive (``build``)."""
