-- A month's build cut into ranges that any worker may export (issue 19).
--
-- archive_ranges: the build's plan (whole finish seconds [first_second, end_second), naive UTC,
-- in archive order) and each range's state. A range is claimed by setting it running with a new
-- attempt number; the claimer refreshes heartbeat_at while it works, so a range whose worker died
-- is taken over once its heartbeat is old. A done range records what its part holds: the CRC-32
-- and length of its uncompressed lines, the length of its raw deflate data, and its tally (counts,
-- exclusions, results, statistics, first and last order keys) for the assembly to merge.
--
-- archive_parts: a done range's raw deflate data in 256 KiB pieces, keyed by the attempt that
-- wrote them, so that a worker thought dead but still writing can never mix its bytes into a
-- retried range's part. The assembly concatenates the parts into archive_chunks and deletes them.

CREATE TABLE archive_ranges (
    archive_id      bigint NOT NULL REFERENCES archives (id) ON DELETE CASCADE,
    seq             integer NOT NULL CHECK (seq >= 0),
    first_second    timestamp NOT NULL,
    end_second      timestamp NOT NULL CHECK (end_second > first_second),
    last            boolean NOT NULL,
    planned         integer NOT NULL CHECK (planned >= 0),
    state           text NOT NULL DEFAULT 'queued'
                    CHECK (state IN ('queued', 'running', 'done', 'failed')),
    attempt         integer NOT NULL DEFAULT 0 CHECK (attempt >= 0),
    retryable       boolean NOT NULL DEFAULT true,
    worker          text,
    started_at      timestamptz,
    heartbeat_at    timestamptz,
    finished_at     timestamptz,
    candidates_done integer NOT NULL DEFAULT 0 CHECK (candidates_done >= 0),
    games           integer NOT NULL DEFAULT 0 CHECK (games >= 0),
    crc32           bigint CHECK (crc32 BETWEEN 0 AND 4294967295),
    raw_bytes       bigint CHECK (raw_bytes >= 0),
    deflate_bytes   bigint CHECK (deflate_bytes >= 0),
    tally           jsonb,
    error           text,
    PRIMARY KEY (archive_id, seq),
    CHECK (state <> 'done' OR (crc32 IS NOT NULL AND raw_bytes IS NOT NULL
                               AND deflate_bytes IS NOT NULL AND tally IS NOT NULL))
);

CREATE TABLE archive_parts (
    archive_id  bigint NOT NULL,
    range_seq   integer NOT NULL,
    attempt     integer NOT NULL,
    seq         integer NOT NULL CHECK (seq >= 0),
    data        bytea NOT NULL,
    PRIMARY KEY (archive_id, range_seq, attempt, seq),
    FOREIGN KEY (archive_id, range_seq) REFERENCES archive_ranges (archive_id, seq)
        ON DELETE CASCADE
);
-- Raw deflate data: compressing it again in TOAST only costs CPU.
ALTER TABLE archive_parts ALTER COLUMN data SET STORAGE EXTERNAL;
