"""The architecture, checked: pure modules of shared/ import nothing that does I/O, services/
and workers/ never import each other, and shared/ imports neither."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# Modules of shared/ that are I/O edges on purpose; every other module is pure.
IO_EDGES = (
    "shared.settings",
    "shared.logs",
    "shared.archive.export",
    "shared.archive.parallel",  # the export's helper processes and their sessions
    "shared.jobs.queue",
    "shared.storage",  # PostgreSQL chunks and the S3 mirror
    "shared.db",
    "shared.cli",
    # the demo's servers and processes; its games, player, defects and examples are pure
    "shared.demo.database",
    "shared.demo.postgres_server",
    "shared.demo.redis_server",
    "shared.demo.processes",
    "shared.demo.run",
)
BANNED_IN_PURE = (
    "asyncpg",
    "aiohttp",
    "redis",
    "arq",
    "boto3",
    "botocore",
    "socket",
    "subprocess",
    "structlog",
    "urllib.request",
    "http.client",
    "services",
    "workers",
    *IO_EDGES,
)


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


def under(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


PURE_MODULES = sorted(
    p for p in (ROOT / "shared").rglob("*.py") if not under(module_name(p), IO_EDGES)
)


@pytest.mark.parametrize("path", PURE_MODULES, ids=lambda p: module_name(p))
def test_pure_modules_do_no_io(path: Path) -> None:
    bad = sorted(i for i in imports_of(path) if under(i, BANNED_IN_PURE))
    assert bad == [], f"{module_name(path)} is pure but imports {bad}"


@pytest.mark.parametrize(("package", "other"), [("services", "workers"), ("workers", "services")])
def test_services_and_workers_never_import_each_other(package: str, other: str) -> None:
    for path in (ROOT / package).rglob("*.py"):
        bad = sorted(i for i in imports_of(path) if under(i, (other,)))
        assert bad == [], f"{module_name(path)} imports {bad}"


def test_shared_never_imports_services_or_workers() -> None:
    # Anywhere in the module, function bodies included: each process owns its command.
    for path in (ROOT / "shared").rglob("*.py"):
        bad = sorted(i for i in imports_of(path) if under(i, ("services", "workers")))
        assert bad == [], f"{module_name(path)} imports {bad}"


def test_the_list_of_pure_modules_is_not_empty() -> None:
    names = {module_name(p) for p in PURE_MODULES}
    assert {"shared.gomoku.game", "shared.archive.months", "shared.catalog.manifest"} <= names
