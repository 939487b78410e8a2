"""The tools find the one package over its three roots, from an editable install and nothing
else (no PYTHONPATH): ``python -m gomoku_archive``, coverage (``[tool.coverage]``) and
import-linter. mypy, ruff, pytest and mkdocs run in the test command itself; the wheel is
``test_light_install.py``'s."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent

pytestmark = pytest.mark.slow


def clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "COVERAGE_FILE")}


def run(*args: str | Path, cwd: Path = ROOT, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(a) for a in args],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
        cwd=cwd,
        env=clean_env() | env,
    )


def test_python_dash_m_runs_the_command_from_the_shared_root(tmp_path: Path) -> None:
    done = run(sys.executable, "-m", "gomoku_archive", "--version", cwd=tmp_path)
    assert done.stdout.startswith("gomoku-archive ")


def test_coverage_measures_all_three_roots(tmp_path: Path) -> None:
    # --help loads every command's module: the dispatcher (shared), serve (services), worker
    # and export (workers).
    data = tmp_path / ".coverage"
    run(BIN / "coverage", "run", "-m", "gomoku_archive", "--help", COVERAGE_FILE=str(data))
    report = tmp_path / "report.json"
    run(BIN / "coverage", "json", "-o", report, COVERAGE_FILE=str(data))
    measured = set(json.loads(report.read_text())["files"])
    assert {Path(name).parts[0] for name in measured} == {"shared", "services", "workers"}
    # Every module of the three roots, the ones this run never imported included (coverage's
    # `source` names the roots' folders: `source_pkgs` over a namespace package misses those).
    modules = {
        str(path.relative_to(ROOT))
        for root in ("shared", "services", "workers")
        for path in (ROOT / root / "gomoku_archive").rglob("*.py")
    }
    assert len(modules) > 180
    assert measured == modules


def test_lint_imports_needs_no_pythonpath() -> None:
    done = run(BIN / "lint-imports")
    assert "0 broken" in done.stdout
