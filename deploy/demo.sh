#!/usr/bin/env bash
# The whole service end to end on this machine, as a newcomer would see it:
#   the bundled example checked by the downloader's verifier; a fresh demo database; the game
#   server's table filled with realistic games; the API and the worker started; the worker's
#   planner exporting every closed month; every file downloaded over HTTP and checked with
#   sha256sum -c and gomoku-archive verify; conditional and range requests shown with curl.
# On a terminal it then keeps serving until Ctrl-C; otherwise (CI, scripts) it stops.
# Settings: GAMES (games per month, default 2000), PORT (default 8080), DEMO_DB, DEMO_REDIS_DB.
set -euo pipefail
source "$(dirname "$0")/lib/bootstrap.sh"
cd "$ROOT"
ensure_venv
ensure_services
ensure_tools

GAMES="${GAMES:-2000}"
PORT="${PORT:-8080}"
DEMO_DB="${DEMO_DB:-gomoku_archive_demo}"
export DATABASE_URL="postgresql://postgres@127.0.0.1:5432/$DEMO_DB"
export REDIS_URL="redis://127.0.0.1:6379/${DEMO_REDIS_DB:-14}"
export OPS_TOKEN="${OPS_TOKEN:-demo-ops-token}"
export LOG_FORMAT=json
GA="$VENV/bin/gomoku-archive"
PY="$VENV/bin/python"
BASE="http://127.0.0.1:$PORT"
WORK="$(mktemp -d)"
PIDS=()

cleanup() {
    for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
}
trap cleanup EXIT

log "1/7 the bundled example archive, checked as a downloader would"
"$GA" verify shared/examples/gomoku-party-2026-08-*.sgf.gz

log "2/7 a fresh demo database ($DEMO_DB) and Redis database"
"$PY" - <<PYEOF
import asyncio, asyncpg
async def main():
    conn = await asyncpg.connect("postgresql://postgres@127.0.0.1:5432/postgres")
    await conn.execute('DROP DATABASE IF EXISTS "$DEMO_DB" WITH (FORCE)')
    await conn.execute('CREATE DATABASE "$DEMO_DB"')
    await conn.close()
asyncio.run(main())
PYEOF
"$PY" -c "import redis; redis.Redis.from_url('$REDIS_URL').flushdb()"
"$GA" migrate

log "3/7 the game server's table: $GAMES valid games a month, Aug-Oct 2026, plus out-of-scope and broken rows"
"$GA" seed-demo --from 2026-08 --to 2026-10 --games-per-month "$GAMES"

log "4/7 the API on $BASE and the worker start; the worker's planner exports every closed month"
"$GA" serve --host 127.0.0.1 --port "$PORT" >"$WORK/api.log" 2>&1 &
PIDS+=($!)
"$GA" worker >"$WORK/worker.log" 2>&1 &
PIDS+=($!)
expected="$("$PY" -c 'from datetime import UTC, datetime
from shared.months import Month, closed_months
print(len(closed_months(Month(2026, 8), datetime.now(UTC))))')"
for i in $(seq 1 300); do
    listed="$(curl -fs "$BASE/api/v1/database" | "$PY" -c 'import json,sys; print(len(json.load(sys.stdin)["months"]))' 2>/dev/null || echo 0)"
    [ "$listed" = "$expected" ] && break
    sleep 1
    if [ "$i" = 300 ]; then
        echo "the worker did not publish $expected months in 300 s; logs in $WORK" >&2
        exit 1
    fi
done
echo "published $expected months"

log "5/7 every file downloaded over HTTP, then sha256sum -c and gomoku-archive verify"
curl -fs "$BASE/api/v1/database" >"$WORK/manifest.json"
"$PY" -c 'import json,sys
for m in json.load(open(sys.argv[1]))["months"]:
    if m["file"]: print(m["downloadUrl"], m["checksumUrl"])' "$WORK/manifest.json" |
while read -r file_url sum_url; do
    (cd "$WORK" && curl -fsSO "$BASE$file_url" && curl -fsSO "$BASE$sum_url" \
        && sha256sum -c "$(basename "$sum_url")")
    "$GA" verify "$WORK/$(basename "$file_url")" | tail -n 3
done

log "6/7 HTTP caching: a conditional request and a range request"
first_url="$("$PY" -c 'import json,sys; print(next(m["downloadUrl"] for m in json.load(open(sys.argv[1]))["months"] if m["file"]))' "$WORK/manifest.json")"
etag="$(curl -fsI "$BASE$first_url" | tr -d '\r' | awk -F': ' 'tolower($1)=="etag"{print $2}')"
echo "If-None-Match: $etag  ->  $(curl -s -o /dev/null -w '%{http_code}' -H "If-None-Match: $etag" "$BASE$first_url")"
echo "Range: bytes=1000-1999  ->  $(curl -s -o /dev/null -w '%{http_code}, %{size_download} bytes' -H 'Range: bytes=1000-1999' "$BASE$first_url")"

log "7/7 the manifest"
"$PY" - "$WORK/manifest.json" <<'PYEOF'
import json, sys
doc = json.load(open(sys.argv[1]))
print(f"{doc['totalGames']} games in {len(doc['months'])} months, "
      f"profile {doc['profile']}, license {doc['license']}")
for m in doc["months"]:
    file = m["file"] or "(no games, no file)"
    print(f"  {m['month']}  {m['games']:>6} games  {m['excludedGames']:>4} excluded  {file}")
PYEOF

echo
echo "Public page:        $BASE/database/"
echo "Profile:            $BASE/database/profile"
echo "Operator dashboard: $BASE/ops/  (token: $OPS_TOKEN)"
echo "Logs:               $WORK/api.log, $WORK/worker.log"
if [ -t 0 ] && [ -t 1 ] && [ -z "${CI:-}" ]; then
    echo "Serving until Ctrl-C."
    wait
fi
