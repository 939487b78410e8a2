-- Ranges claimed straight from this table by every worker's range slot (issue 37).
--
-- archive_ranges.queued_at: since when the range may be claimed: its plan's insert, its
-- failure (a retryable one is claimable again at once), or, for a range taken over after its
-- claimer's heartbeat stopped, the instant that heartbeat went stale (set by the claim). A
-- claim's wait, shown to operators, is started_at - queued_at. NULL on ranges planned before.
--
-- archive_ranges_open: the ranges not done yet, in archive order (build, then seq), the only
-- ones a claim looks at; a finished build's ranges leave it.

ALTER TABLE archive_ranges ADD COLUMN queued_at timestamptz;
ALTER TABLE archive_ranges ALTER COLUMN queued_at SET DEFAULT now();

CREATE INDEX archive_ranges_open ON archive_ranges (archive_id, seq) WHERE state <> 'done';
