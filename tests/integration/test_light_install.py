"""The wheel as a downloader installs it: built from the source tree, its top level is exactly
``gomoku_archive``; installed without extras into a fresh virtual environment, it gives
``verify``, ``games`` and ``sgf check`` on the bundled example archive, none of the service's
dependencies, and one clear line for a server command."""

from __future__ import annotations

import subprocess
import sys
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


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    run(sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", out, ROOT)
    (built,) = out.glob("gomoku_party_archive-*.whl")
    return built


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


def test_a_server_command_names_the_extra_in_one_line(light: Path) -> None:
    done = run(light / "gomoku-archive", "serve", "--port", "8080", check=False)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "gomoku-archive: error: serve needs the server extra, which is not installed: "
        "pip install 'gomoku-party-archive[server]'"
    ]
    listed = run(light / "gomoku-archive", "--help").stdout
    assert "worker" in listed and "[server]" in listed
