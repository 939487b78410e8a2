-- Every game exactly once (issue 26).
--
-- archive_ranges.source_rows, source_sum: the fingerprint of the rows a range read, taken in
-- the range's own source snapshot (the transaction that read them): how many candidates its
-- seconds held, and the sum of hashtextextended(id, xmin) over them. A row that moved in or
-- out of the range's seconds, was inserted, deleted or updated (a new xmin) changes it. Once
-- every range is done the coordinator fingerprints all ranges again in one statement (one
-- snapshot) and exports again the ranges whose fingerprint differs, so the published month is
-- the rows of one instant. NULL until the range is done.
--
-- archives.first_published_at: when these bytes were first published. published_at is the
-- latest time they became the month's file (a restore sets it to the restore's time), so a
-- month's history reads in order; first_published_at keeps the first.

ALTER TABLE archive_ranges
    ADD COLUMN source_rows bigint CHECK (source_rows >= 0),
    ADD COLUMN source_sum  numeric;

ALTER TABLE archives
    ADD COLUMN first_published_at timestamptz;

UPDATE archives SET first_published_at = published_at WHERE published_at IS NOT NULL;
