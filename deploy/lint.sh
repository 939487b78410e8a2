#!/usr/bin/env bash
# One of the project's linters, at its pinned version (deploy/constraints.txt), from .venv/:
# `bash deploy/lint.sh ruff|mypy|lint-imports [ARGS...]`. Creates or updates .venv/ first as
# deploy/test.sh does, so the pre-commit hooks (.pre-commit-config.yaml) work on a fresh clone,
# fetch only from the package index, and check exactly what CI checks.
set -euo pipefail
source "$(dirname "$0")/lib/bootstrap.sh"
cd "$ROOT"
case "${1:-}" in
    ruff | mypy | lint-imports) ;;
    *) echo "usage: deploy/lint.sh ruff|mypy|lint-imports [ARGS...]" >&2; exit 2 ;;
esac
ensure_venv
exec "$VENV/bin/$1" "${@:2}"
