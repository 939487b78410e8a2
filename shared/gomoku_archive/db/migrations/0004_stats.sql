-- A month's statistics (winners, game lengths, move heatmaps, ratings, time controls), counted by
-- the export from the games it writes and set in the transaction that publishes them: exact
-- counts only (shared/archive/stats.py, MonthStats.to_json); the manifest derives its figures.
-- NULL on rows published before this migration, and on rows whose games were never counted;
-- the next export of the month sets them (a rebuild with the same bytes changes nothing else).
ALTER TABLE archives ADD COLUMN stats jsonb;
