-- Parquet companions (issue 36): beside each archive, a typed Parquet file of the same games.
--
-- A companion is a row of archives like the file it derives from (so downloads, the local file
-- cache, the S3 mirror and its checks serve it exactly as they serve an archive), with
-- companion_of naming that archive. It follows its archive's state: published with it,
-- superseded with it, published again when a rebuild restores it; deleted with it (a build's
-- copy dropped as unchanged takes its companion along). schema_id and created_by are the
-- companion's identity beside its bytes: the schema (gomoku-party-parquet-1) and the writer's
-- version as the file's footer says it. row_groups is what the footer holds.
--
-- The month's partial unique index now counts archives only; companions get their own, and an
-- archive has at most one served companion.
--
-- companion_parts: a done range's row group of the companion (the range encodes it from its
-- games' lines as a one-group Parquet file), the group's bytes in 256 KiB pieces, keyed by the
-- attempt that wrote them (as archive_parts), until the month's companion is joined from them
-- (the pieces copied into its chunks inside PostgreSQL, as the archive's assembly does);
-- companion_part_footers: that file's footer and the group's rows and length, written once the
-- pieces are. A part follows its range's number when a replanned build keeps the range (as
-- archive_parts since migration 0010), hence ON UPDATE CASCADE.

ALTER TABLE archives
    ADD COLUMN companion_of bigint REFERENCES archives (id) ON DELETE CASCADE,
    ADD COLUMN schema_id    text,
    ADD COLUMN created_by   text,
    ADD COLUMN row_groups   integer CHECK (row_groups >= 0),
    ADD CONSTRAINT archives_companion_identity
        CHECK (companion_of IS NULL OR file_name IS NULL
               OR (schema_id IS NOT NULL AND created_by IS NOT NULL AND row_groups IS NOT NULL));

DROP INDEX archives_one_published_per_month;
CREATE UNIQUE INDEX archives_one_published_per_month ON archives (month)
    WHERE state = 'published' AND companion_of IS NULL;
CREATE UNIQUE INDEX companions_one_published_per_month ON archives (month)
    WHERE state = 'published' AND companion_of IS NOT NULL;
CREATE UNIQUE INDEX companions_one_served_per_archive ON archives (companion_of)
    WHERE state IN ('published', 'superseded');
CREATE INDEX archives_companion_of ON archives (companion_of) WHERE companion_of IS NOT NULL;

CREATE TABLE companion_parts (
    archive_id  bigint NOT NULL,
    range_seq   integer NOT NULL,
    attempt     integer NOT NULL,
    seq         integer NOT NULL CHECK (seq >= 0),
    data        bytea NOT NULL,
    PRIMARY KEY (archive_id, range_seq, attempt, seq),
    FOREIGN KEY (archive_id, range_seq) REFERENCES archive_ranges (archive_id, seq)
        ON DELETE CASCADE ON UPDATE CASCADE
);
-- zstd-compressed Parquet pages: compressing them again in TOAST only costs CPU.
ALTER TABLE companion_parts ALTER COLUMN data SET STORAGE EXTERNAL;

CREATE TABLE companion_part_footers (
    archive_id  bigint NOT NULL,
    range_seq   integer NOT NULL,
    attempt     integer NOT NULL,
    rows        integer NOT NULL CHECK (rows > 0),
    body_bytes  bigint NOT NULL CHECK (body_bytes > 0),
    footer      bytea NOT NULL,
    PRIMARY KEY (archive_id, range_seq, attempt),
    FOREIGN KEY (archive_id, range_seq) REFERENCES archive_ranges (archive_id, seq)
        ON DELETE CASCADE ON UPDATE CASCADE
);
