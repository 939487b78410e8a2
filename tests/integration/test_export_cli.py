"""The export as an operator and a downloader meet it: the command line, the checksum file
with the real sha256sum/shasum, the core verifier, and a process killed mid-export."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import asyncpg
import pytest

from gomoku_archive.db import archive_store
from gomoku_archive.storage.chunks import iter_archive
from tests.support import pool_from

CLI = [sys.executable, "-m", "gomoku_archive.cli.main"]


def cli(dsn: str, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DATABASE_URL": dsn, "LOG_FORMAT": "json"}
    return subprocess.run(
        [*CLI, *args], env=env, capture_output=True, text=True, timeout=timeout, check=False
    )


def test_missing_database_is_one_clear_line() -> None:
    result = cli("postgresql://postgres@127.0.0.1:5432/gpa_no_such_database", "manifest")
    assert result.returncode == 3
    assert result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith("gomoku-archive: error: cannot use the database")
    assert "Traceback" not in result.stderr


def test_unreachable_database_is_one_clear_line() -> None:
    result = cli("postgresql://postgres@127.0.0.1:1/x", "export", "--missing")
    assert result.returncode == 3
    assert "Traceback" not in result.stderr
    assert "cannot use the database" in result.stderr


def test_a_missing_games_table_says_what_is_wrong(db_dsn: str) -> None:
    """The games table is the game server's: `migrate` would never create it."""
    env = {**os.environ, "DATABASE_URL": db_dsn, "GAMES_TABLE": "nosuch"}
    result = subprocess.run(
        [*CLI, "export", "--month", "2026-08"], env=env, capture_output=True, text=True, check=False
    )
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1, result.stderr
    assert 'relation "nosuch" does not exist' in result.stderr
    assert "check GAMES_TABLE" in result.stderr
    assert "migrate" not in result.stderr


def test_open_month_is_refused(db_dsn: str) -> None:
    result = cli(db_dsn, "export", "--month", "2999-01")
    assert result.returncode == 2
    assert "not closed yet" in result.stderr


def test_seed_export_manifest_verify_and_checksums(db_dsn: str, tmp_path: Path) -> None:
    seeded = cli(
        db_dsn, "seed-demo", "--from", "2026-08", "--to", "2026-09", "--games-per-month", "300"
    )
    assert seeded.returncode == 0, seeded.stderr
    again = cli(
        db_dsn, "seed-demo", "--from", "2026-08", "--to", "2026-09", "--games-per-month", "300"
    )
    assert again.returncode == 0 and again.stdout.startswith("inserted 0 rows"), again.stdout

    exported = cli(db_dsn, "export", "--missing")
    assert exported.returncode == 0, exported.stderr
    summaries = [json.loads(line) for line in exported.stdout.splitlines()]
    months = [s["month"] for s in summaries]
    assert months[:2] == ["2026-08", "2026-09"]  # then every later closed month, with no games
    assert all(s["outcome"] == "published" for s in summaries)
    assert summaries[0]["games"] == 300 and summaries[1]["games"] == 300

    manifest = json.loads(cli(db_dsn, "manifest").stdout)
    assert [m["month"] for m in manifest["months"]] == sorted(months, reverse=True)
    assert manifest["totalGames"] == 600

    # Download the August file as a user would (bytes from the chunks) with its checksum file.
    entry = next(m for m in manifest["months"] if m["month"] == "2026-08")

    async def fetch() -> bytes:
        async with pool_from(db_dsn, max_size=1) as pool:
            async with pool.acquire() as conn:
                row = await archive_store.downloadable_archive(conn, entry["file"])
            assert row is not None
            return b"".join([bytes(c) async for c in iter_archive(pool, row.id, row.bytes)])

    data = asyncio.run(fetch())
    archive = tmp_path / entry["file"]
    archive.write_bytes(data)
    (tmp_path / (entry["file"] + ".sha256")).write_text(f"{entry['sha256']}  {entry['file']}\n")
    for tool in (["sha256sum", "-c"], ["shasum", "-a", "256", "-c"]):
        checked = subprocess.run(
            [*tool, entry["file"] + ".sha256"],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            check=False,
        )
        assert checked.returncode == 0, checked.stdout + checked.stderr
        assert "OK" in checked.stdout

    verified = cli(db_dsn, "verify", str(archive))
    assert verified.returncode == 0, verified.stdout + verified.stderr

    # A tampered copy fails both the checksum and the verifier.
    tampered = bytearray(data)
    tampered[len(tampered) // 2] ^= 0x01
    archive.write_bytes(bytes(tampered))
    assert (
        subprocess.run(
            ["sha256sum", "-c", entry["file"] + ".sha256"],
            cwd=tmp_path,
            capture_output=True,
            check=False,
        ).returncode
        != 0
    )
    assert cli(db_dsn, "verify", str(archive)).returncode != 0


def fetchval(dsn: str, sql: str) -> object:
    async def go() -> object:
        conn = await asyncpg.connect(dsn)
        try:
            return await conn.fetchval(sql)
        finally:
            await conn.close()

    return asyncio.run(go())


@pytest.mark.slow
def test_export_killed_with_sigkill_leaves_nothing_visible(db_dsn: str) -> None:
    seeded = cli(
        db_dsn, "seed-demo", "--from", "2026-08", "--to", "2026-08", "--games-per-month", "20000"
    )
    assert seeded.returncode == 0, seeded.stderr
    env = {**os.environ, "DATABASE_URL": db_dsn, "LOG_FORMAT": "json"}
    proc = subprocess.Popen(
        [*CLI, "export", "--month", "2026-08"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:  # wait until a range has written part of its data
            written = fetchval(db_dsn, "SELECT count(*) FROM archive_parts")
            if written or proc.poll() is not None:
                break
            time.sleep(0.05)
        assert proc.poll() is None, "the export finished before it could be killed: seed more"
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert (
        fetchval(
            db_dsn,
            "SELECT count(*) FROM archives WHERE state = 'building' AND companion_of IS NULL",
        )
        == 1
    )
    assert (
        fetchval(
            db_dsn,
            "SELECT count(*) FROM archives WHERE state <> 'building' AND companion_of IS NULL",
        )
        == 0
    )
    finished = cli(db_dsn, "export", "--month", "2026-08")
    assert finished.returncode == 0, finished.stderr
    summary = json.loads(finished.stdout)
    assert summary["outcome"] == "published" and summary["games"] == 20000
    assert (
        fetchval(db_dsn, "SELECT string_agg(state, ',') FROM archives WHERE companion_of IS NULL")
        == "published"
    )
