-- Why a month was rebuilt (issue 34).
--
-- archives.rebuild_reason: the reason an operator gave for the forced rebuild that built this
-- row (`rebuild --reason`, the /ops/ form): one line of plain text, at most 200 characters
-- (gomoku_archive.jobs.rebuild_reason checks it before it is queued). NULL for the planner's
-- builds and for rebuilds asked without one. Written when the build starts, so a failed
-- rebuild keeps it for operators; a file it published keeps it for good: downloaders read it
-- on /database/, in the feed and in the manifest (`rebuildReason`), and it never changes
-- afterwards, as a feed entry never does.
--
-- archives.last_rebuild_at, last_rebuild_reason: the latest forced rebuild that ended on this
-- published row without new bytes (the same file again, or an earlier file restored) and its
-- reason (NULL: none given). For operators only (/ops/, `jobs --json`): the file downloaders
-- see did not change, so nothing they read does.

ALTER TABLE archives
    ADD COLUMN rebuild_reason text
        CHECK (char_length(rebuild_reason) BETWEEN 1 AND 200),
    ADD COLUMN last_rebuild_at timestamptz,
    ADD COLUMN last_rebuild_reason text
        CHECK (char_length(last_rebuild_reason) BETWEEN 1 AND 200);
