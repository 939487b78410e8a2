"""Module paths written as text (``-m`` invocations, entry points, monkeypatch targets, docs,
templates, SQL) resolve, and so do the repository's file paths written there: a rename that
forgets one fails here instead of at run time or in a reader's hands."""

from __future__ import annotations

import importlib
import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOTTED = re.compile(r"(?<![\w./-])gomoku_archive(?:\.[A-Za-z_]\w*)+")
ROOTS = ("shared", "services", "workers")
SCANNED = [
    *sorted(
        p for root in ROOTS for ext in ("*.py", "*.html", "*.sql") for p in (ROOT / root).rglob(ext)
    ),
    *sorted((ROOT / "tests").rglob("*.py")),
    *sorted((ROOT / "deploy").rglob("*")),
    *sorted((ROOT / "helm").rglob("*")),
    *sorted((ROOT / "docs").rglob("*.md")),
    ROOT / "pyproject.toml",
    ROOT / "README.md",
]


# A file of the repository, named from its top folder (``src/`` was the layout before the roots).
REPO_PATH = re.compile(
    r"(?<![\w./-])(?:src|shared|services|workers|tests|docs|deploy|helm)/[\w./-]*"
    r"\.(?:py|html|sql|md|sh|toml|yaml|yml|tpl)\b"
)
MIGRATIONS = ROOT / "shared" / "gomoku_archive" / "db" / "migrations"
"""Applied migrations keep their text, comments included: ``db.migrate`` checks each file's
checksum against the one recorded when it ran, so an edited file stops every deployed database."""

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


def texts() -> list[tuple[Path, str]]:
    return [
        (path, path.read_text(encoding="utf-8"))
        for path in SCANNED
        if path.is_file() and path.suffix not in (".gz", ".png")
    ]


def mentions() -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for path, text in texts():
        for match in DOTTED.finditer(text):
            found.setdefault(match.group(0).rstrip("."), set()).add(str(path.relative_to(ROOT)))
    return found


def file_mentions() -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for path, text in texts():
        if path.parent == MIGRATIONS:
            continue
        for match in REPO_PATH.finditer(text):
            found.setdefault(match.group(0), set()).add(str(path.relative_to(ROOT)))
    return found


def test_the_scan_finds_module_paths() -> None:
    assert "gomoku_archive.cli.main" in mentions()


def test_the_scan_reads_templates_and_sql() -> None:
    found = mentions()
    assert (
        "services/gomoku_archive/web/pages/templates/error.html"
        in found["gomoku_archive.http.negotiation.prefers_html"]
    )
    files = file_mentions()
    assert (
        "shared/gomoku_archive/db/reference/games.sql"
        in files["shared/gomoku_archive/db/source.py"]
    )
    assert (
        "services/gomoku_archive/web/pages/templates/charts.html"
        in files["services/gomoku_archive/web/pages/charts.py"]
    )


@pytest.mark.parametrize(
    ("path", "where"), sorted((k, sorted(v)) for k, v in file_mentions().items())
)
def test_every_file_path_written_as_text_exists(path: str, where: list[str]) -> None:
    assert not path.startswith("src/"), (
        f"{path} (in {', '.join(where)}): the layout before the roots"
    )
    assert (ROOT / path).exists(), f"{path} (in {', '.join(where)}) names no file"


@pytest.mark.parametrize(
    ("dotted", "where"),
    sorted((k, sorted(v)) for k, v in mentions().items() if k not in NOT_MODULES),
)
def test_every_module_path_written_as_text_resolves(dotted: str, where: list[str]) -> None:
    assert resolves(dotted), f"{dotted} (in {', '.join(where)}) names no module or attribute"
