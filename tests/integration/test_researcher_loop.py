"""The researcher's monthly loop, end to end on a running demo, with nothing but what the page
says: a fresh virtual environment installs the tool by the page's own ``pip install`` line
(from this server's /database/tools/), and the page's ``sync`` line mirrors every month into a
folder; the tool verifies them; a sync killed (SIGKILL) in the middle of a download leaves no
partial file under a final name, and the next run finishes; after a forced rebuild of a month
with more games, the next run fetches the new file and moves the old one aside, so the folder
holds every game once."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import shlex
import signal
import subprocess
import sys
import time
import venv
from pathlib import Path
from typing import Any

import pytest

from gomoku_archive.about import version
from tests.integration.api_support import code_block
from tests.integration.sync_support import archives, slow_proxy
from tests.integration.test_demo import (  # noqa: F401 (fixtures)
    StartDemo,
    demo_environment,
    get,
    place,
    start_demo,
)

pytestmark = pytest.mark.slow

REBUILD_WITHIN = 240.0


def manifest(base: str) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(get(f"{base}/api/v1/database"))
    return document


def current(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {m["file"]: m for m in document["months"] if m["file"]}


def page_lines(base: str) -> tuple[str, str]:
    """The page's two lines: install the tool, sync a folder."""
    page = get(f"{base}/database/").decode()
    install, sync = code_block(page, "sync").splitlines()
    return install, sync


def in_venv(env: Path, line: str, cwd: Path, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    """A line of the page, typed into a shell with the fresh environment activated."""
    return subprocess.run(
        ["bash", "-c", f"source {env}/bin/activate && {line}"],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
        env={k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")},
        check=False,
        **kwargs,
    )


def checked(folder: Path, files: dict[str, dict[str, Any]]) -> None:
    """Every archive under its final name in ``folder`` is whole: its SHA-256 is the manifest's."""
    for name in archives(folder):
        assert name in files, name
        assert hashlib.sha256((folder / name).read_bytes()).hexdigest() == files[name]["sha256"]


async def test_install_from_the_page_then_sync_every_month(
    start_demo: StartDemo,  # noqa: F811
    place: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    data = place / "data"
    demo = start_demo(data)
    await asyncio.to_thread(demo.wait_ready)
    base = demo.base

    # The page's lines: the wheel from this server, sync pointed at it.
    install, sync = page_lines(base)
    wheel = f"gomoku_party_archive-{version()}-py3-none-any.whl"
    assert install == f"pip install {base}/database/tools/{wheel}"
    assert sync == f"gomoku-archive sync gomoku-party --base-url {base}"
    listing = get(f"{base}/database/tools/").decode()
    served = get(f"{base}/database/tools/{wheel}")
    assert f'href="{wheel}#sha256={hashlib.sha256(served).hexdigest()}"' in listing

    env = tmp_path / "venv"
    await asyncio.to_thread(venv.create, env, with_pip=True)
    work = tmp_path / "work"
    work.mkdir()
    done = await asyncio.to_thread(in_venv, env, install, work)
    assert done.returncode == 0, done.stderr
    tool = env / "bin" / "gomoku-archive"
    assert tool.is_file()
    where = await asyncio.to_thread(
        subprocess.run,
        [
            env / "bin" / "python",
            "-c",
            "import gomoku_archive.cli.sync_cmd as m; print(m.__file__)",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert where.stdout.startswith(str(env))  # the installed wheel, not this checkout

    folder = work / "gomoku-party"
    files = current(manifest(base))
    assert len(files) >= 2

    # A first sync through a slow link, killed while a download is under way.
    assert demo.port
    async with slow_proxy(demo.port, rate=6_000) as proxy:
        argv = shlex.split(sync)
        argv[argv.index("--base-url") + 1] = proxy.base
        killed = await asyncio.create_subprocess_exec(
            str(env / "bin" / argv[0]), *argv[1:], cwd=work,
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
        )  # fmt: skip
        deadline = time.monotonic() + 60
        while not [p for p in folder.glob("*.part") if p.stat().st_size > 2_000]:
            assert time.monotonic() < deadline, "no download started"
            assert killed.returncode is None
            await asyncio.sleep(0.05)
        killed.send_signal(signal.SIGKILL)
        await killed.wait()
    parts = list(folder.glob("*.part"))
    assert parts
    checked(folder, files)  # nothing partial under a final name
    assert len(archives(folder)) < len(files)

    # The page's line again: it finishes, resuming the parts.
    done = await asyncio.to_thread(in_venv, env, sync, work)
    assert done.returncode == 0, done.stdout + done.stderr
    assert archives(folder) == sorted(files)
    checked(folder, files)
    assert not list(folder.glob("*.part"))
    lines = done.stdout.splitlines()
    assert len(lines) == len(manifest(base)["months"]) + 1
    assert all(line.split()[1] in ("new", "unchanged") for line in lines[:-1]), lines

    verified = await asyncio.to_thread(in_venv, env, "gomoku-archive verify gomoku-party", work)
    assert verified.returncode == 0, verified.stdout
    assert verified.stdout.rstrip().endswith(f"{len(files)} files: {len(files)} OK")

    again = await asyncio.to_thread(in_venv, env, sync, work)
    assert again.returncode == 0
    assert again.stdout.splitlines()[-1].endswith("; 0 bytes downloaded")

    # A forced rebuild of the oldest month, with more games in the game server's table.
    month = min(m["month"] for m in files.values())
    old = next(name for name, m in files.items() if m["month"] == month)
    exports = get_env(data)
    for command in (
        ["seed-demo", "--from", month, "--to", month, "--games-per-month", "7", "--seed", "4242"],
        ["rebuild", "--month", month],
    ):
        ran = await asyncio.to_thread(
            subprocess.run,
            [sys.executable, "-m", "gomoku_archive.cli.main", *command],
            env={**demo_environment(), **exports},
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert ran.returncode == 0, ran.stderr
    deadline = time.monotonic() + REBUILD_WITHIN
    while old in (now := current(manifest(base))):
        assert time.monotonic() < deadline, "the rebuild was not published"
        await asyncio.sleep(1)
    new = next(name for name, m in now.items() if m["month"] == month)

    done = await asyncio.to_thread(in_venv, env, sync, work)
    assert done.returncode == 0, done.stdout
    line = next(line for line in done.stdout.splitlines() if line.startswith(month))
    assert line.split()[:3] == [month, "rebuilt", new]
    assert f"[{old} moved to superseded/]" in line
    assert (folder / "superseded" / old).is_file()
    assert archives(folder) == sorted(now)
    games = await asyncio.to_thread(in_venv, env, "gomoku-archive games gomoku-party", work)
    assert games.returncode == 0
    assert len(games.stdout.splitlines()) == sum(m["games"] for m in now.values())

    await asyncio.to_thread(demo.stop, signal.SIGINT)


def get_env(data: Path) -> dict[str, str]:
    """DATABASE_URL and REDIS_URL of the running demo, from ``demo --env``."""
    shown = subprocess.run(
        [sys.executable, "-m", "gomoku_archive.cli.main", "demo", "--env", "--data", str(data)],
        env=demo_environment(),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    found = dict(
        line.removeprefix("export ").split("=", 1) for line in shown.splitlines() if "=" in line
    )
    return {name: shlex.split(value)[0] for name, value in found.items()}
