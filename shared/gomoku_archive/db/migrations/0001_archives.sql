-- The service's own tables. The game server's table is never touched by a migration.

CREATE TABLE archives (
    id                  bigserial PRIMARY KEY,
    month               text NOT NULL CHECK (month ~ '^[0-9]{4}-(0[1-9]|1[0-2])$'),
    state               text NOT NULL CHECK (state IN ('building', 'published', 'superseded', 'failed')),
    -- NULL for a zero-game month (published, listed, no file) and while building.
    file_name           text UNIQUE,
    sha256              text CHECK (sha256 ~ '^[0-9a-f]{64}$'),
    bytes               bigint NOT NULL DEFAULT 0 CHECK (bytes >= 0),
    uncompressed_bytes  bigint NOT NULL DEFAULT 0 CHECK (uncompressed_bytes >= 0),
    games               integer NOT NULL DEFAULT 0 CHECK (games >= 0),
    candidate_games     integer NOT NULL DEFAULT 0 CHECK (candidate_games >= 0),
    excluded_games      integer NOT NULL DEFAULT 0 CHECK (excluded_games >= 0),
    exclusions          jsonb NOT NULL DEFAULT '{}',
    results             jsonb NOT NULL DEFAULT '{}',
    created_at          timestamptz NOT NULL DEFAULT now(),
    finished_at         timestamptz,
    published_at        timestamptz,
    superseded_at       timestamptz,
    failed_at           timestamptz,
    error               text,
    s3_key              text,
    s3_etag             text,
    mirrored_at         timestamptz,
    CHECK (candidate_games = games + excluded_games),
    CHECK (state NOT IN ('published', 'superseded') OR published_at IS NOT NULL),
    CHECK (file_name IS NULL OR (sha256 IS NOT NULL AND bytes > 0))
);

-- At most one published archive per month: the manifest's entry.
CREATE UNIQUE INDEX archives_one_published_per_month ON archives (month) WHERE state = 'published';
CREATE INDEX archives_month ON archives (month, created_at DESC);

CREATE TABLE archive_chunks (
    archive_id  bigint NOT NULL REFERENCES archives (id) ON DELETE CASCADE,
    seq         integer NOT NULL CHECK (seq >= 0),
    data        bytea NOT NULL,
    PRIMARY KEY (archive_id, seq)
);
-- Chunks are already gzip: compressing them again in TOAST only costs CPU.
ALTER TABLE archive_chunks ALTER COLUMN data SET STORAGE EXTERNAL;
