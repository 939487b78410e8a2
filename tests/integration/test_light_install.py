"""The wheel as a downloader installs it: built from the source tree (the namespace package's
three roots, ``shared/``, ``services/`` and ``workers/``), its top level is exactly
``gomoku_archive``, and the wheel built from the sdist holds the same files; installed without
extras into a fresh virtual environment, it gives ``verify``, ``games`` and ``sgf check`` on the
bundled example archive, none of the service's dependencies, and one clear line for a server
command."""

from __future__ import annotations

import subprocess
import sys
import tarfile
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SERVER_IMPORTS = ("aiohttp", "asyncpg", "arq", "redis", "boto3", "structlog", "jinja2")

pytestmark = pytest.mark.slow


def run(*args: str | Path, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(a) for a in args], capture_output=True, text=True, check=check, timeout=600
    )


def build(out: Path, *flags: str) -> Path:
    """``python -m build``, the PyPA front end, in an isolated build environment."""
    run(sys.executable, "-m", "build", "--outdir", out, *flags, ROOT)
    (built,) = out.glob("gomoku_party_archive-*.whl")
    return built


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel built straight from the source tree."""
    return build(tmp_path_factory.mktemp("wheel"), "--wheel")


def package_files(wheel: Path) -> dict[str, str]:
    """The wheel's files outside its metadata, each with its hash as RECORD lists it."""
    with zipfile.ZipFile(wheel) as archive:
        (record,) = [n for n in archive.namelist() if n.endswith(".dist-info/RECORD")]
        rows = archive.read(record).decode().splitlines()
    hashes = dict(row.rsplit(",", 2)[:2] for row in rows)
    return {name: digest for name, digest in hashes.items() if ".dist-info/" not in name}


def test_the_wheel_from_the_sdist_equals_the_direct_wheel(
    wheel: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    out = tmp_path_factory.mktemp("sdist")
    from_sdist = build(out)  # no flag: the sdist, then a wheel built from the unpacked sdist
    (sdist,) = out.glob("gomoku_party_archive-*.tar.gz")
    files = package_files(wheel)
    assert package_files(from_sdist) == files
    # Everything a process needs is inside: templates, migrations and the example archive.
    for needed in (
        "gomoku_archive/web/pages/templates/database.html",
        "gomoku_archive/db/migrations/0001_archives.sql",
        "gomoku_archive/db/reference/games.sql",
        "gomoku_archive/demo/examples/gomoku-party-2026-08-33ef3c90e4bfe4e7.sgf.gz",
        "gomoku_archive/worker/arq_worker.py",
        "gomoku_archive/export/month.py",
        "gomoku_archive/about.py",
    ):
        assert needed in files, needed
    assert "gomoku_archive/__init__.py" not in files  # a namespace package, as in the tree
    with tarfile.open(sdist) as archive:
        tops = {name.split("/")[1] for name in archive.getnames() if name.count("/")}
    assert tops == {
        "shared",
        "services",
        "workers",
        "README.md",
        "LICENSE",
        "pyproject.toml",
        "PKG-INFO",
        ".gitignore",  # hatchling always ships it: the wheel built from the sdist obeys it too
    }


@pytest.fixture(scope="module")
def light(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtual environment with the wheel and nothing else it does not require."""
    env = tmp_path_factory.mktemp("light") / "venv"
    venv.create(env, with_pip=True)
    constraints = ROOT / "deploy" / "constraints.txt"
    run(env / "bin" / "python", "-m", "pip", "install", "-q", "-c", constraints, wheel)
    return env / "bin"


def test_the_wheel_installs_one_top_level_package(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        tops = {name.split("/")[0] for name in archive.namelist()}
    assert {t for t in tops if not t.endswith(".dist-info")} == {"gomoku_archive"}


def test_the_light_install_has_no_server_dependency(light: Path) -> None:
    code = (
        "import importlib.util\n"
        f"print([m for m in {SERVER_IMPORTS!r} if importlib.util.find_spec(m)])\n"
    )
    assert run(light / "python", "-c", code).stdout.strip() == "[]"


@pytest.fixture(scope="module")
def example(light: Path) -> Path:
    """The example archive as installed with the package (package data, not the source tree)."""
    code = "from gomoku_archive.demo.examples import EXAMPLES_DIR; print(EXAMPLES_DIR)"
    folder = Path(run(light / "python", "-c", code).stdout.strip())
    assert ROOT not in folder.parents
    (archive,) = folder.glob("gomoku-party-*.sgf.gz")
    return archive


def test_verify_games_and_sgf_check_run_on_the_example(light: Path, example: Path) -> None:
    verified = run(light / "gomoku-archive", "verify", example).stdout
    assert "(checksum file: verified)" in verified
    assert "OK: every check of gomoku-party-sgf-1 holds" in verified
    games = run(light / "gomoku-archive", "games", example).stdout.splitlines()
    assert len(games) == 200
    checked = run(light / "gomoku-archive", "sgf", "check", example).stdout
    assert checked.endswith(": parse ok: 200 games\n" + f"{example}: 0 errors, 0 warnings\n")


def test_sync_is_in_the_light_install(light: Path, wheel: Path, tmp_path: Path) -> None:
    """``sync`` runs on the light install: an unreachable service is its one clear line."""
    done = run(
        light / "gomoku-archive", "sync", tmp_path / "a", "--base-url", "http://127.0.0.1:9",
        check=False,
    )  # fmt: skip
    assert done.returncode == 3
    assert done.stderr.startswith("gomoku-archive: error: cannot reach http://127.0.0.1:9/")
    demo = run(light / "gomoku-archive", "demo", check=False)
    # The package is not on the index yet: the line names the wheel this copy came from.
    assert demo.stderr.strip() == (
        "gomoku-archive: error: demo needs the demo extra, which is not installed: "
        f"pip install 'gomoku-party-archive[demo] @ {wheel.as_uri()}'"
    )


def test_a_server_command_names_the_extra_in_one_line(light: Path, wheel: Path) -> None:
    done = run(light / "gomoku-archive", "serve", "--port", "8080", check=False)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "gomoku-archive: error: serve needs the server extra, which is not installed: "
        f"pip install 'gomoku-party-archive[server] @ {wheel.as_uri()}'"
    ]
    listed = run(light / "gomoku-archive", "--help").stdout
    assert "worker" in listed and "needs the server extra" in listed
