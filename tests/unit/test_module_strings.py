"""Module paths written as text (``-m`` invocations, entry points, monkeypatch targets, docs)
resolve: a rename that forgets one fails here instead of at run time."""

from __future__ import annotations

import importlib
import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOTTED = re.compile(r"(?<![\w./-])gomoku_archive(?:\.[A-Za-z_]\w*)+")
SCANNED = [
    *sorted(p for root in ("shared", "services", "workers") for p in (ROOT / root).rglob("*.py")),
    *sorted((ROOT / "tests").rglob("*.py")),
    *sorted((ROOT / "deploy").rglob("*")),
    *sorted((ROOT / "helm").rglob("*")),
    *sorted((ROOT / "docs").rglob("*.md")),
    ROOT / "pyproject.toml",
    ROOT / "README.md",
]


NOT_MODULES = {
    "gomoku_archive.access": "the access log's logger name (logs.ACCESS_LOGGER)",
    "gomoku_archive.commands": "the entry-point group of the commands",
}


def resolves(dotted: str) -> bool:
    """A module, or an attribute of one (``package.module.Class.method``)."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            spec = importlib.util.find_spec(".".join(parts[:cut]))
        except ModuleNotFoundError:  # a parent is a module, not a package
            continue
        if spec is None:
            continue
        found: object = importlib.import_module(".".join(parts[:cut]))
        for attribute in parts[cut:]:
            if not hasattr(found, attribute):
                return False
            found = getattr(found, attribute)
        return True
    return False


def mentions() -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for path in SCANNED:
        if not path.is_file() or path.suffix in (".gz", ".png"):
            continue
        for match in DOTTED.finditer(path.read_text(encoding="utf-8")):
            found.setdefault(match.group(0).rstrip("."), set()).add(str(path.relative_to(ROOT)))
    return found


def test_the_scan_finds_module_paths() -> None:
    assert "gomoku_archive.cli.main" in mentions()


@pytest.mark.parametrize(
    ("dotted", "where"),
    sorted((k, sorted(v)) for k, v in mentions().items() if k not in NOT_MODULES),
)
def test_every_module_path_written_as_text_resolves(dotted: str, where: list[str]) -> None:
    assert resolves(dotted), f"{dotted} (in {', '.join(where)}) names no module or attribute"
