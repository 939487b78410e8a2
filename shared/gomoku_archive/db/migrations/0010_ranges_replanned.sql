-- A month's bytes follow the state its file holds (issue 34).
--
-- When the consistency check finds that its snapshot plans other ranges than the build's, or
-- that rows of some ranges changed, the build's ranges become that snapshot's plan: every range
-- of the new plan gets a number after the build's last one (so seq order stays archive order,
-- and a range job id is never used twice), a done range whose edges and rows are unchanged keeps
-- its part and moves to its new number, and the others are new rows, queued. A part follows its
-- range's number, hence ON UPDATE CASCADE.

ALTER TABLE archive_parts
    DROP CONSTRAINT archive_parts_archive_id_range_seq_fkey,
    ADD CONSTRAINT archive_parts_archive_id_range_seq_fkey FOREIGN KEY (archive_id, range_seq)
        REFERENCES archive_ranges (archive_id, seq) ON DELETE CASCADE ON UPDATE CASCADE;
