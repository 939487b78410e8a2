-- Which store holds each verified copy (issue 34).
--
-- s3_bucket and s3_key said where a copy is, but not in which store: pointing the service at
-- another store with a bucket of the same name (another endpoint) kept redirecting downloads
-- to copies that store never had (a 404) until `mirror --verify`. s3_store is the store's
-- identity as the service reaches it (S3_ENDPOINT_URL normalised, or 'aws' for AWS S3 itself:
-- gomoku_archive.storage.s3.store_identity), written with s3_bucket by every read-back that
-- matched. A copy is a redirect target only in the store it was verified in.
--
-- Rows verified before this migration have NULL: their store is unknown, so they are no
-- redirect targets until the worker's backfill has read them back once in the current store
-- (nothing is uploaded when the copy is there and right).

ALTER TABLE archives
    ADD COLUMN s3_store text;

