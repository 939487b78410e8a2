-- When an export last produced a row's bytes: its first build, and every later build of the month
-- that gave the same file again (an unchanged rebuild) or published it again (a restore). The
-- month's "last good build" for operators: a failure older than it is history, not a problem.
ALTER TABLE archives ADD COLUMN built_at timestamptz;
UPDATE archives SET built_at = finished_at WHERE state IN ('published', 'superseded');
