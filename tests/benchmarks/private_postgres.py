"""A PostgreSQL cluster of the benchmark's own, for runs that need more connections than the
machine's server allows (its ``max_connections`` is 100; 64 simulated workers hold about 250):
``initdb`` and ``pg_ctl`` from the machine's PostgreSQL binaries, a free loopback port, no
durability (``fsync`` off: a benchmark's data is thrown away), removed afterwards. As root the
server runs as the ``postgres`` system user, as PostgreSQL requires."""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

from .support import free_port

BINARIES = Path(os.environ.get("BENCH_PG_BIN", "/usr/lib/postgresql/15/bin"))
RUN_AS_WHEN_ROOT = "postgres"


def _as_server_user(command: list[str]) -> list[str]:
    if os.geteuid() != 0:
        return command
    return ["runuser", "-u", RUN_AS_WHEN_ROOT, "--", *command]


@contextlib.contextmanager
def private_cluster(*, max_connections: int) -> Iterator[str]:
    """A running cluster; yields its superuser DSN (database ``postgres``, trust on
    loopback)."""
    folder = Path(tempfile.mkdtemp(prefix="gpa-bench-pg-"))
    try:
        if os.geteuid() == 0:
            entry = pwd.getpwnam(RUN_AS_WHEN_ROOT)
            os.chown(folder, entry.pw_uid, entry.pw_gid)
        data = folder / "data"
        subprocess.run(
            _as_server_user(
                [
                    str(BINARIES / "initdb"),
                    "--pgdata",
                    str(data),
                    "--username",
                    "postgres",
                    "--auth",
                    "trust",
                    "--encoding",
                    "UTF8",
                    "--no-sync",
                ]
            ),
            check=True,
            capture_output=True,
        )
        port = free_port()
        settings = {
            "port": port,
            "listen_addresses": "127.0.0.1",
            "unix_socket_directories": str(folder),
            "max_connections": max_connections,
            "shared_buffers": "256MB",
            "fsync": "off",
            "synchronous_commit": "off",
            "full_page_writes": "off",
        }
        options = " ".join(f"-c {key}={value}" for key, value in settings.items())
        subprocess.run(
            _as_server_user(
                [
                    str(BINARIES / "pg_ctl"),
                    "--pgdata",
                    str(data),
                    "--log",
                    str(folder / "server.log"),
                    "--options",
                    options,
                    "--wait",
                    "start",
                ]
            ),
            check=True,
            capture_output=True,
        )
        try:
            yield f"postgresql://postgres@127.0.0.1:{port}/postgres"
        finally:
            subprocess.run(
                _as_server_user(
                    [str(BINARIES / "pg_ctl"), "--pgdata", str(data), "--mode", "fast", "stop"]
                ),
                check=False,
                capture_output=True,
            )
    finally:
        shutil.rmtree(folder, ignore_errors=True)
