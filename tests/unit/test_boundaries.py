"""The architecture, checked. Layers, cycles and the pure domain's third-party imports are
import-linter contracts (``[tool.importlinter]`` in pyproject.toml, run by ``lint-imports`` in the
test command); this adds what import-linter cannot name: standard-library modules that reach the
network or other processes, which the pure packages must not import either."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "shared" / "gomoku_archive"
"""The pure packages are all in the shared root (tests/unit/test_layout.py checks the roots)."""
PURE_PACKAGES = ("sgf", "gomoku", "profile", "http", "catalog", "verify", "jobs")
BANNED_IN_PURE = ("urllib.request", "http.client", "socket", "ssl", "subprocess", "multiprocessing")


def imports_of(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


PURE_MODULES = sorted(p for name in PURE_PACKAGES for p in (PACKAGE / name).rglob("*.py"))


@pytest.mark.parametrize("path", PURE_MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_pure_modules_do_no_io(path: Path) -> None:
    bad = sorted(
        i for i in imports_of(path) if any(i == b or i.startswith(b + ".") for b in BANNED_IN_PURE)
    )
    assert bad == [], f"{path.relative_to(PACKAGE)} is pure but imports {bad}"


def test_every_pure_package_has_modules() -> None:
    assert {p.relative_to(PACKAGE).parts[0] for p in PURE_MODULES} == set(PURE_PACKAGES)
