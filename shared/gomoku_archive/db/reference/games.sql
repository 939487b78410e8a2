-- Reference schema of the game server's table (owned by the game server; this service only
-- SELECTs from it). Tests and the demo load this file; {table} is the GAMES_TABLE setting.
CREATE TABLE IF NOT EXISTS {table} (
  id                   uuid PRIMARY KEY,
  mode                 text NOT NULL,      -- RANKED, CASUAL, FRIENDLY, PRIVATE, TOURNAMENT, CHALLENGE, REMATCH, PUZZLE
  rated                boolean NOT NULL,
  ruleset              text NOT NULL,      -- FREESTYLE, STANDARD, RENJU, SWAP2, PENTE, NINUKI_RENJU, CARO
  board_size           smallint NOT NULL DEFAULT 15,
  status               text NOT NULL,      -- FINISHED, ABORTED, IN_PROGRESS
  started_at           timestamptz NOT NULL,
  finished_at          timestamptz,        -- NULL until the game ends
  result               text,               -- BLACK_WIN, WHITE_WIN, DRAW
  termination          text,               -- FIVE, RESIGNATION, TIMEOUT, BOARD_FULL, AGREEMENT
  moves                jsonb NOT NULL DEFAULT '[]',  -- [{"color":"B","x":7,"y":7}, ...] 0-based column x, row y from the top-left, in play order
  time_control_seconds integer,
  black_rating         integer,            -- Elo at game start
  white_rating         integer,
  black_player_id      uuid,               -- private: never leaves the database
  white_player_id      uuid                -- private: never leaves the database
);

-- The index the export relies on: it selects one month of in-scope games and reads them in the
-- archive's order (finish second, then id) without sorting. The expression must match
-- shared/gomoku_archive/db/source.py exactly; AT TIME ZONE 'UTC' makes it immutable, so it can be
-- indexed.
CREATE INDEX IF NOT EXISTS {index} ON {table}
  ((date_trunc('second', finished_at AT TIME ZONE 'UTC')), id)
  WHERE mode = 'RANKED' AND rated AND ruleset = 'FREESTYLE';
