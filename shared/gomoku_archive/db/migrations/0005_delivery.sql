-- Delivery through a CDN and the cheap check of redirect targets (issue 18).
--
-- With CDN_BASE_URL a verified copy in the bucket is a redirect target only once an anonymous GET
-- of the exact URL a client receives returned the archive's bytes: cdn_url is that URL and
-- cdn_verified_at when it was read; a failed read clears cdn_verified_at and says why in
-- cdn_error. mirror_head_checked_at is the last time the worker's periodic HEAD found the
-- copy's size and ETag unchanged.

ALTER TABLE archives
    ADD COLUMN cdn_url                text,
    ADD COLUMN cdn_verified_at        timestamptz,
    ADD COLUMN cdn_error              text,
    ADD COLUMN mirror_head_checked_at timestamptz,
    ADD CHECK (cdn_verified_at IS NULL OR (cdn_url IS NOT NULL AND mirrored_at IS NOT NULL));
