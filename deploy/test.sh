#!/usr/bin/env bash
# The whole test suite on a fresh Debian machine: installs what it needs, starts PostgreSQL and
# Redis if they are down, fetches helm, promtool and checkov for the chart tests and s3rver for
# the mirror's second S3 implementation, then runs ruff, mypy (strict),
# lint-imports, a strict build of the docs (a broken link fails) and pytest under coverage,
# whose total it prints (every module of the three roots counts: pyproject.toml
# [tool.coverage]; COVERAGE=0 runs pytest without it). Extra arguments go to pytest.
set -euo pipefail
source "$(dirname "$0")/lib/bootstrap.sh"
cd "$ROOT"
ensure_venv
ensure_services
ensure_chromium
ensure_browser_checks
ensure_tools
ensure_helm
ensure_promtool
ensure_checkov
ensure_s3rver
log "ruff check, ruff format --check"
"$VENV/bin/ruff" check .
"$VENV/bin/ruff" format --check .
log "mypy --strict"
"$VENV/bin/mypy"
log "lint-imports (the layers: pyproject.toml [tool.importlinter])"
"$VENV/bin/lint-imports"
log "mkdocs build --strict (docs/ as mkdocs.yml lays it out; into a temporary directory)"
site="$(mktemp -d)"
"$VENV/bin/mkdocs" build --strict --quiet --site-dir "$site"
rm -rf "$site"
if [[ "${COVERAGE:-1}" == 0 ]]; then
  log "pytest (COVERAGE=0: without coverage)"
  "$VENV/bin/pytest" "$@"
  exit
fi
# Under coverage the Python code runs about twice as slowly (Python 3.11 traces line by line;
# docs/contributing.md has the measured cost): COVERAGE=0 skips it.
log "pytest, under coverage"
status=0
"$VENV/bin/coverage" erase
"$VENV/bin/coverage" run -m pytest "$@" || status=$?
log "coverage of the three roots (lines and branches, every module): $("$VENV/bin/coverage" report --format=total)%"
exit "$status"
