#!/usr/bin/env bash
# The whole test suite on a fresh Debian machine: installs what it needs, starts PostgreSQL and
# Redis if they are down, fetches helm for the chart tests, then runs ruff, mypy (strict) and
# pytest. Extra arguments go to pytest.
set -euo pipefail
source "$(dirname "$0")/lib/bootstrap.sh"
cd "$ROOT"
ensure_venv
ensure_services
ensure_chromium
ensure_tools
ensure_helm
log "ruff"
"$VENV/bin/ruff" check .
log "mypy --strict"
"$VENV/bin/mypy"
log "pytest"
"$VENV/bin/pytest" "$@"
