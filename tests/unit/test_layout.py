"""The repository's layout is the design's: ``services/``, ``workers/`` and ``shared/`` are the
three roots of one namespace package, ``gomoku_archive``, each holding one role (where each
command lives: tests/unit/cli/test_cli_main.py). import-linter checks the imports between the
roles (``[tool.importlinter]``); this checks what it cannot see: the folders themselves, and
the unit tests' folders mirroring the packages."""

from __future__ import annotations

import importlib
import importlib.metadata
import tomllib
from pathlib import Path

import pytest

import gomoku_archive
from gomoku_archive.about import version

ROOT = Path(__file__).resolve().parents[2]
ROOTS = {"shared": ROOT / "shared", "services": ROOT / "services", "workers": ROOT / "workers"}
ROLES = {
    "services": {"web"},
    "workers": {"worker", "export"},
}
"""What the two process roots hold; everything else is shared."""
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def children(root: Path) -> set[str]:
    """The sub-packages and modules of one root's ``gomoku_archive/``."""
    folder = root / "gomoku_archive"
    return {
        p.stem
        for p in folder.iterdir()
        if p.name != "__pycache__" and (p.suffix == ".py" or (p / "__init__.py").is_file())
    }


def contract(name_start: str) -> dict[str, object]:
    contracts = PYPROJECT["tool"]["importlinter"]["contracts"]
    (found,) = [c for c in contracts if c["name"].startswith(name_start)]
    return found


def test_the_top_level_is_the_designs() -> None:
    for name in ("pyproject.toml", "services", "workers", "shared", "deploy", "tests", "helm"):
        assert (ROOT / name).exists(), name
    assert not (ROOT / "src").exists()


@pytest.mark.parametrize("root", sorted(ROOTS))
def test_no_root_has_an_init_that_would_hide_the_others(root: str) -> None:
    # A regular package in one root makes Python stop there: the other two roots vanish.
    assert not (ROOTS[root] / "gomoku_archive" / "__init__.py").exists()


def test_the_package_path_is_exactly_the_three_roots() -> None:
    paths = {Path(p).resolve() for p in gomoku_archive.__path__}
    assert paths == {r.resolve() / "gomoku_archive" for r in ROOTS.values()}
    assert len(list(gomoku_archive.__path__)) == 3


@pytest.mark.parametrize("root", sorted(ROLES))
def test_each_process_root_holds_its_role_only(root: str) -> None:
    assert children(ROOTS[root]) == ROLES[root]


def test_no_name_is_in_two_roots() -> None:
    seen: dict[str, str] = {}
    for root, path in ROOTS.items():
        for name in children(path):
            assert name not in seen, f"{name} is in {seen[name]}/ and {root}/"
            seen[name] = root


def test_the_roles_contract_lists_every_shared_package() -> None:
    """A new package in shared/ is covered by "nothing under shared/ imports a role"."""
    sources = contract("Roles: nothing under shared/")["source_modules"]
    assert {s.removeprefix("gomoku_archive.") for s in sources} == children(ROOTS["shared"]) - {
        "__main__"
    }


def test_the_purity_contract_covers_the_pure_packages() -> None:
    sources = contract("The pure domain does no I/O")["source_modules"]
    pure = {"sgf", "gomoku", "profile", "companion", "http", "catalog", "verify", "jobs"}
    assert {s.removeprefix("gomoku_archive.") for s in sources} == pure


def test_the_build_takes_the_three_roots() -> None:
    hatch = PYPROJECT["tool"]["hatch"]["build"]
    assert hatch["targets"]["wheel"]["packages"] == [
        f"{root}/gomoku_archive" for root in ("shared", "services", "workers")
    ]
    assert hatch["dev-mode-dirs"] == ["shared", "services", "workers"]
    assert set(PYPROJECT["tool"]["mypy"]["mypy_path"]) == set(ROOTS)


def test_the_docstring_and_version_stay_reachable() -> None:
    assert gomoku_archive.__doc__ is None  # a namespace package has none: it lives in `about`
    assert "gomoku-party-sgf-1" in (importlib.import_module("gomoku_archive.about").__doc__ or "")
    assert version() == importlib.metadata.version("gomoku-party-archive")


UNIT = ROOT / "tests" / "unit"
FLAT_UNIT_TESTS = {
    # checks of the whole project
    "test_boundaries.py",
    "test_docs.py",
    "test_docs_options.py",
    "test_layout.py",
    "test_module_strings.py",
    # the top-level modules'
    "test_logs.py",
    "test_settings.py",
}
"""What docs/contributing.md lists as sitting directly in tests/unit/."""


def test_unit_tests_mirror_the_packages() -> None:
    packages = {name for folder in ROOTS.values() for name in children(folder)}
    folders = {p.name for p in UNIT.iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert folders <= packages, f"tests/unit/ folders that name no package: {folders - packages}"
    assert {p.name for p in UNIT.glob("test_*.py")} == FLAT_UNIT_TESTS
