-- Where the periodic content check stands in every copy, and when it last compared one whole
-- (issue 34).
--
-- content_offset: the byte the check's next window starts at (jobs.content_sample). It moves on
-- only when a window is found right, so a pass that is late, runs twice or is lost never skips
-- bytes; back to 0 after the last window, and when a window is found wrong.
-- content_cycle_started_at: when the latest cycle's first window (offset 0) was found right;
-- NULL again when a window is found wrong.
-- content_checked_at: when the check last completed a cycle, its last window found right: every
-- byte of the copy (in the bucket, and at its CDN address behind a CDN) was compared with
-- PostgreSQL's between that cycle's start and this time. NULL until a first cycle completes.

ALTER TABLE archives
    ADD COLUMN content_offset           bigint NOT NULL DEFAULT 0 CHECK (content_offset >= 0),
    ADD COLUMN content_cycle_started_at timestamptz,
    ADD COLUMN content_checked_at       timestamptz;
