"""``gomoku-archive sync`` against the real API: a folder of every month, its checksum files and
nothing twice; a second run fetches nothing (the manifest answers 304); a rebuilt month's old
file moves to superseded/ (or is deleted with --prune); a download killed in its middle is
resumed; and bad input gets one clear line and its exit status: an unreachable host, a document
that is not the manifest, a checksum mismatch (the file kept aside), a full disk."""

from __future__ import annotations

import asyncio
import hashlib
import html
import json
import os
import re
import resource
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from gomoku_archive.db.pool import Pool
from gomoku_archive.profile.months import Month
from gomoku_archive.settings import Settings
from gomoku_archive.web.keys import TOOLS
from gomoku_archive.web.tools_wheel import ToolsWheel, ensure_wheel, find_wheel
from tests.integration.api_support import (
    Client,
    app_of,
    free_port,
    publish_bytes,
    publish_demo_month,
    random_bytes,
)
from tests.integration.sync_support import archives, gomoku_archive, program, slow_proxy

pytestmark = pytest.mark.slow


@pytest.fixture
async def api_data(pool: Pool) -> None:
    """``api`` serves three months: 30 games, none, 20 games."""
    await publish_demo_month(pool, Month(2026, 8), 30, seed=1)
    await publish_demo_month(pool, Month(2026, 9), 0)
    await publish_demo_month(pool, Month(2026, 10), 20, seed=2)


def base_of(api: Client) -> str:
    return str(api.make_url("")).rstrip("/")


async def manifest(api: Client) -> dict[str, Any]:
    document: dict[str, Any] = await (await api.get("/api/v1/database")).json()
    return document


async def test_a_folder_of_every_month_then_nothing_twice(api: Client, tmp_path: Path) -> None:
    folder = tmp_path / "archive"
    code, out, err = await gomoku_archive("sync", folder, "--base-url", base_of(api), "--verify")
    assert (code, err) == (0, ""), out
    lines = out.splitlines()
    assert [line.split()[:2] for line in lines[:3]] == [
        ["2026-08", "new"],
        ["2026-09", "no"],
        ["2026-10", "new"],
    ]
    assert "verified: 30 games" in lines[0] and "verified: 20 games" in lines[2]
    assert lines[3].startswith("3 months: 2 new, 1 no games; ")
    document = await manifest(api)
    current = sorted(m["file"] for m in document["months"] if m["file"])
    assert archives(folder) == current
    for name in current:
        code, out, _ = await gomoku_archive(
            "-c", f"{name}.sha256", command=["sha256sum"], cwd=folder
        )
        assert code == 0, out
    assert json.loads((folder / "manifest.json").read_bytes()) == document
    assert not list(folder.glob("*.part"))

    code, out, _ = await gomoku_archive("sync", folder, "--base-url", base_of(api))
    assert code == 0
    assert [line.split()[:2] for line in out.splitlines()[:3]] == [
        ["2026-08", "unchanged"],
        ["2026-09", "no"],
        ["2026-10", "unchanged"],
    ]
    assert out.splitlines()[-1].endswith("; 0 bytes downloaded")


async def test_a_rebuilt_month_moves_the_old_file_aside(
    api: Client, pool: Pool, tmp_path: Path
) -> None:
    folder = tmp_path / "archive"
    assert (await gomoku_archive("sync", folder, "--base-url", base_of(api)))[0] == 0
    before = archives(folder)
    await publish_demo_month(pool, Month(2026, 10), 5, seed=3)  # five more games: a rebuild
    await refresh(api)
    code, out, _ = await gomoku_archive(
        "sync", folder, "--base-url", base_of(api), "--from", "2026-10"
    )
    assert code == 0, out
    (line, summary) = out.splitlines()
    old = next(name for name in before if "2026-10" in name)
    assert line.startswith("2026-10  rebuilt ")
    assert f"[{old} moved to superseded/]" in line
    assert summary.startswith("1 month: 1 rebuilt; ")
    assert (folder / "superseded" / old).is_file()
    assert (folder / "superseded" / f"{old}.sha256").is_file()
    assert len([n for n in archives(folder) if "2026-10" in n]) == 1
    code, games, _ = await gomoku_archive("games", folder)
    assert code == 0
    assert len(games.splitlines()) == 30 + 25  # every game once: the superseded file is not read

    await publish_demo_month(pool, Month(2026, 10), 1, seed=4)
    await refresh(api)
    code, out, _ = await gomoku_archive("sync", folder, "--base-url", base_of(api), "--prune")
    assert code == 0, out
    assert "deleted]" in out.splitlines()[2]
    assert sorted(p.name for p in (folder / "superseded").iterdir()) == [old, f"{old}.sha256"]


def companions(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.glob("*.parquet"))


async def test_parquet_keeps_the_companions_as_the_archives(
    api: Client, pool: Pool, tmp_path: Path
) -> None:
    folder = tmp_path / "archive"
    code, out, err = await gomoku_archive("sync", folder, "--base-url", base_of(api), "--parquet")
    assert (code, err) == (0, ""), out
    lines = out.splitlines()
    assert [line.split()[:2] for line in lines[:-1]] == [
        ["2026-08", "new"],
        ["2026-08", "new"],
        ["2026-09", "no"],
        ["2026-09", "no"],
        ["2026-10", "new"],
        ["2026-10", "new"],
    ]
    assert lines[-1].startswith("3 months: 2 new, 1 no games; 3 Parquet companions: 2 new, 1 ")
    document = await manifest(api)
    current = sorted(m["parquet"]["file"] for m in document["months"] if m["parquet"])
    assert companions(folder) == current and len(current) == 2
    for name in current:
        code, out, _ = await gomoku_archive(
            "-c", f"{name}.sha256", command=["sha256sum"], cwd=folder
        )
        assert code == 0, out

    code, out, _ = await gomoku_archive("sync", folder, "--base-url", base_of(api), "--parquet")
    assert code == 0 and out.splitlines()[-1].endswith("; 0 bytes downloaded"), out
    old = next(name for name in current if "2026-10" in name)
    await publish_demo_month(pool, Month(2026, 10), 5, seed=3)  # five more games: a rebuild
    await refresh(api)
    code, out, _ = await gomoku_archive("sync", folder, "--base-url", base_of(api))
    assert code == 0 and old in companions(folder), "without --parquet companions stay as they are"
    code, out, _ = await gomoku_archive(
        "sync", folder, "--base-url", base_of(api), "--parquet", "--from", "2026-10"
    )
    assert code == 0, out
    assert f"[{old} moved to superseded/]" in out.splitlines()[1]
    assert (folder / "superseded" / old).is_file()
    assert len([n for n in companions(folder) if "2026-10" in n]) == 1


async def refresh(api: Client) -> None:
    """The app's manifest cache, reloaded now (publish's NOTIFY does it within moments)."""
    from gomoku_archive.web.keys import MANIFEST

    cache = app_of(api)[MANIFEST]
    await cache.refresh()


async def test_a_killed_download_is_resumed(api: Client, pool: Pool, tmp_path: Path) -> None:
    data = random_bytes(3_000_000, seed=9)
    row = await publish_bytes(pool, "2026-11", data)
    await refresh(api)
    folder = tmp_path / "archive"
    assert api.server is not None and api.server.port is not None
    async with slow_proxy(api.server.port, rate=1_000_000) as proxy:
        proc = await asyncio.create_subprocess_exec(
            *program(), "sync", str(folder), "--base-url", proxy.base, "--from", "2026-11",
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
        )  # fmt: skip
        part = folder / f"{row.file_name}.part"
        for _ in range(400):
            if part.exists() and part.stat().st_size >= 500_000:
                break
            await asyncio.sleep(0.025)
        proc.send_signal(signal.SIGKILL)
        await proc.wait()
    had = part.stat().st_size
    assert 500_000 <= had < len(data)
    assert not (folder / str(row.file_name)).exists()  # nothing partial under the final name
    code, out, _ = await gomoku_archive(
        "sync", folder, "--base-url", base_of(api), "--from", "2026-11"
    )
    assert code == 0, out
    assert out.splitlines()[0].startswith(f"2026-11  new        {row.file_name}")
    assert out.splitlines()[-1].endswith(f"{(len(data) - had) / 1e6:.1f} MB downloaded")
    assert hashlib.sha256((folder / str(row.file_name)).read_bytes()).hexdigest() == row.sha256
    assert not part.exists()


@pytest.mark.parametrize("page", ["/database/", "/database"])
async def test_the_page_s_address_as_base_url_syncs_from_its_origin(
    api: Client, tmp_path: Path, page: str
) -> None:
    """The address a user copies from the browser, with or without its slash: sync takes the
    origin (it asked for /database/api/v1/database, and stopped at that 404)."""
    folder = tmp_path / "archive"
    code, out, err = await gomoku_archive("sync", folder, "--base-url", base_of(api) + page)
    assert (code, err) == (0, ""), out
    assert out.splitlines()[-1].startswith("3 months: 2 new, 1 no games; ")
    assert json.loads((folder / "manifest.json").read_bytes()) == await manifest(api)


async def test_another_path_as_base_url_says_the_origin_is_wanted(
    api: Client, tmp_path: Path
) -> None:
    url = base_of(api) + "/archive/"
    code, out, err = await gomoku_archive("sync", tmp_path / "a", "--base-url", url)
    assert (code, out) == (2, "")
    assert err == (
        f"gomoku-archive: error: --base-url wants the archive service's origin, such as "
        f"{base_of(api)} (no path; its page's address, {base_of(api)}/database/, also does), "
        f"got {url!r}\n"
    )


async def test_an_unreachable_host_is_one_line(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    code, out, err = await gomoku_archive("sync", tmp_path / "a", "--base-url", url)
    assert (code, out) == (3, "")
    assert err.startswith(f"gomoku-archive: error: cannot reach {url}/api/v1/database: ")
    assert len(err.splitlines()) == 1


def static_site(root: Path) -> subprocess.Popen[bytes]:
    """A plain file server over ``root`` (what a wrong --base-url, or a tampered mirror, is)."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"],
        cwd=root,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    proc.port = port  # type: ignore[attr-defined]
    return proc


async def wait_listening(port: int) -> None:
    for _ in range(200):
        try:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            await asyncio.sleep(0.02)
            continue
        writer.close()
        return
    raise AssertionError("the file server did not start")


async def test_not_the_manifest_and_a_checksum_mismatch(tmp_path: Path) -> None:
    site = tmp_path / "site"
    (site / "api" / "v1").mkdir(parents=True)
    (site / "files").mkdir()
    (site / "api" / "v1" / "database").write_text('{"hello": "world"}')
    server = static_site(site)
    try:
        base = f"http://127.0.0.1:{server.port}"  # type: ignore[attr-defined]
        await wait_listening(server.port)  # type: ignore[attr-defined]
        code, out, err = await gomoku_archive("sync", tmp_path / "a", "--base-url", base)
        assert (code, out) == (2, "")
        assert err == (
            f"gomoku-archive: error: {base}/api/v1/database is not a Gomoku Party archive "
            "manifest: its profile is None, not 'gomoku-party-sgf-1'\n"
        )

        # A manifest that lists a file whose bytes are not the ones it names.
        claimed = hashlib.sha256(b"the real bytes").hexdigest()
        name = f"gomoku-party-2026-08-{claimed[:16]}.sgf.gz"
        (site / "files" / name).write_bytes(b"other bytes")
        month = {
            "month": "2026-08", "file": name, "sha256": claimed, "bytes": 11,
            "downloadUrl": f"/files/{name}",
        }  # fmt: skip
        document = {"schemaVersion": 1, "profile": "gomoku-party-sgf-1", "months": [month]}
        (site / "api" / "v1" / "database").write_text(json.dumps(document))
        folder = tmp_path / "b"
        code, out, err = await gomoku_archive("sync", folder, "--base-url", base)
        assert code == 1
        assert f"{name}: checksum mismatch" in out.splitlines()[0]
        assert not (folder / name).exists() and not (folder / f"{name}.part").exists()
        assert (folder / "rejected" / name).read_bytes() == b"other bytes"

        # A name that would leave the folder is refused before anything is written.
        month["file"] = "../evil.sgf.gz"
        (site / "api" / "v1" / "database").write_text(json.dumps(document))
        code, _, err = await gomoku_archive("sync", tmp_path / "c", "--base-url", base)
        assert code == 2 and "'../evil.sgf.gz' is not an archive name of 2026-08" in err
    finally:
        server.terminate()
        server.wait()


async def test_a_full_disk_is_one_line_and_the_next_run_finishes(
    api: Client, pool: Pool, tmp_path: Path
) -> None:
    """RLIMIT_FSIZE stands in for a full file system: writes past it fail (EFBIG) as a full
    disk's do (ENOSPC), and the command says so in a line instead of a traceback."""
    row = await publish_bytes(pool, "2026-11", random_bytes(400_000, seed=3))
    await refresh(api)
    folder = tmp_path / "archive"

    def limit() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (150_000, 150_000))

    proc = await asyncio.create_subprocess_exec(
        *program(), "sync", str(folder), "--base-url", base_of(api), "--from", "2026-11",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, preexec_fn=limit,
    )  # fmt: skip
    out, err = await proc.communicate()
    assert proc.returncode == 1, out
    assert err.decode().startswith(f"gomoku-archive: error: no space left for {row.file_name}.part")
    assert len(err.splitlines()) == 1
    assert not (folder / str(row.file_name)).exists()
    code, out_again, _ = await gomoku_archive(
        "sync", folder, "--base-url", base_of(api), "--from", "2026-11"
    )
    assert code == 0, out_again
    assert (folder / str(row.file_name)).stat().st_size == 400_000


async def test_the_pages_pipx_line_runs_the_tool_from_this_server(
    api: Client, tmp_path: Path
) -> None:
    """``pipx run --spec <this host>/database/tools/<wheel> gomoku-archive ...``, as the page
    prints it, in a pipx home of the test's own."""
    assert shutil.which("pipx"), "pipx is missing: deploy/lib/bootstrap.sh installs it"
    await asyncio.to_thread(ensure_wheel, Settings())
    app = app_of(api)
    app[TOOLS].wheel = ToolsWheel.read(find_wheel(Settings()) or Path("missing"))
    page = await (await api.get("/database/")).text()
    found = re.search(
        r"<code[^>]*>(pipx run --spec \S+ gomoku-archive sync gomoku-party[^<]*)<", page
    )
    assert found is not None
    line = html.unescape(found.group(1))
    assert f"{base_of(api)}/database/tools/gomoku_party_archive-" in line
    env = {**os.environ, "PIPX_HOME": str(tmp_path / "pipx"), "PIPX_BIN_DIR": str(tmp_path / "bin")}
    env.pop("PYTHONPATH", None)
    proc = await asyncio.create_subprocess_exec(
        *shlex.split(line), cwd=tmp_path, env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await proc.communicate()
    assert proc.returncode == 0, err.decode()[-2000:]
    assert out.decode().splitlines()[-1].startswith("3 months: 2 new, 1 no games; ")
    assert len(archives(tmp_path / "gomoku-party")) == 2


def downloaded(count: int) -> str:
    """The end of sync's summary line for ``count`` bytes (its own units)."""
    for unit, scale in (("MB", 10**6), ("kB", 10**3)):
        if count >= scale:
            return f"{count / scale:.1f} {unit} downloaded"
    return f"{count} bytes downloaded"


STOP_BOUND_SECONDS = 3.0
"""From SIGINT to the process's exit, on a loaded machine; typically well under a second (a
256 KiB read took 26 s at 10 kB/s, and a silent server held it for the 30 s read timeout)."""


@pytest.mark.parametrize(
    ("size", "rate", "stall_after", "before_stop"),
    [
        pytest.param(2_000_000, 200_000, None, 200_000, id="200kB/s"),
        pytest.param(300_000, 10_000, None, 30_000, id="10kB/s"),
        pytest.param(300_000, 50_000, 40_000, 30_000, id="silent-server"),
    ],
)
async def test_ctrl_c_stops_at_once_at_any_speed_and_the_next_run_resumes(
    api: Client, pool: Pool, tmp_path: Path, size: int, rate: int, stall_after: int | None,
    before_stop: int,
) -> None:  # fmt: skip
    """Ctrl-C mid-file: the process exits within ``STOP_BOUND_SECONDS`` at 200 kB/s, at 10 kB/s
    and with a server gone silent in the middle of the body; the part holds what arrived,
    written as it arrived, and the next run resumes from it and checks the file's SHA-256."""
    data = random_bytes(size, seed=5)
    row = await publish_bytes(pool, "2026-11", data)
    await refresh(api)
    folder = tmp_path / "archive"
    assert api.server is not None and api.server.port is not None
    part = folder / f"{row.file_name}.part"
    # The wait is by the clock; at 10 kB/s the part must show its first 30 kB within 15 s
    # (it stayed empty for 26 s when sync wrote only whole 256 KiB reads).
    patience = 60 if rate >= 50_000 else 15
    async with slow_proxy(api.server.port, rate=rate, stall_after=stall_after) as proxy:
        proc = await asyncio.create_subprocess_exec(
            *program(), "sync", str(folder), "--base-url", proxy.base, "--from", "2026-11",
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        deadline = time.monotonic() + patience
        while not (part.exists() and part.stat().st_size >= before_stop):
            assert proc.returncode is None, "sync ended before its download was interrupted"
            have = part.stat().st_size if part.exists() else 0
            assert time.monotonic() < deadline, f"the part held {have:,} bytes after {patience} s"
            await asyncio.sleep(0.02)
        if stall_after is not None:
            await asyncio.sleep(1.0)  # the server silent, sync waiting in a read
        interrupted = time.monotonic()
        proc.send_signal(signal.SIGINT)
        out, err = await asyncio.wait_for(proc.communicate(), timeout=60)
        stopped_in = time.monotonic() - interrupted
        answer = proxy.answers[-1]
    assert proc.returncode == 130, out + err
    assert err.decode().splitlines()[-1] == "gomoku-archive: interrupted"
    assert stopped_in < STOP_BOUND_SECONDS, f"{stopped_in:.1f} s from SIGINT to the exit"
    had = part.stat().st_size
    assert part.read_bytes() == data[:had]  # what arrived, in order
    # Every byte passed on a second before the signal was in the part by the exit (the rest
    # may have been in flight); none that was not sent.
    assert answer.body_by(interrupted - 1.0) <= had <= answer.body < size
    if stall_after is not None:
        assert had == answer.body  # the silent server's last bytes were all written
    assert not (folder / str(row.file_name)).exists()
    code, out_again, _ = await gomoku_archive(
        "sync", folder, "--base-url", base_of(api), "--from", "2026-11"
    )
    assert code == 0, out_again
    assert out_again.splitlines()[-1].endswith(downloaded(size - had))  # resumed, not restarted
    assert hashlib.sha256((folder / str(row.file_name)).read_bytes()).hexdigest() == row.sha256
    print(
        f"{rate / 1000:.0f} kB/s{' then silent' if stall_after else ''}: SIGINT to exit "
        f"{stopped_in:.2f} s, the part {had:,} bytes, resumed with {size - had:,}"
    )
