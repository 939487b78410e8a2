-- The S3 mirror's record on each archive. An archive counts as mirrored only while mirrored_at is
-- set: the object was read back from the bucket and its SHA-256 and length matched. A copy found
-- wrong clears mirrored_at at once, so downloads stop being redirected to it.

ALTER TABLE archives
    ADD COLUMN s3_bucket             text,
    -- Last time the bucket's copy was read back and matched (upload or scrub).
    ADD COLUMN mirror_checked_at     timestamptz,
    ADD COLUMN mirror_failed_at      timestamptz,
    ADD COLUMN mirror_error          text,
    -- Every byte sent to the bucket for this archive (first upload and repairs).
    ADD COLUMN mirror_uploaded_bytes bigint NOT NULL DEFAULT 0 CHECK (mirror_uploaded_bytes >= 0),
    ADD CHECK (mirrored_at IS NULL OR (file_name IS NOT NULL AND s3_bucket IS NOT NULL
                                       AND s3_key IS NOT NULL AND s3_etag IS NOT NULL));

-- The backfill's question, "which served files are not yet verified in the bucket?".
CREATE INDEX archives_not_mirrored ON archives (id)
    WHERE mirrored_at IS NULL AND file_name IS NOT NULL AND state IN ('published', 'superseded');
