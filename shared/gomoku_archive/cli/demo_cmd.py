"""``gomoku-archive demo``: the whole service on this machine, from nothing to a published
archive in a browser. It sits above the API and the worker and starts them as processes (it
imports neither); docs/demo.md says what it does and why."""

from __future__ import annotations

import argparse
import os
import secrets
import shlex
import signal
import socket
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType

from gomoku_archive.demo import DemoFailed
from gomoku_archive.demo.lock import acquire, describe, running_record, stop_leftovers
from gomoku_archive.demo.own_servers import is_own
from gomoku_archive.demo.run_record import DemoRun, environment_lines
from gomoku_archive.runtime import load_settings, port_arg

DEFAULT_GAMES_PER_MONTH = 2000
ROOT_DATA_DIR = Path("/var/lib/gomoku-archive/demo")
"""Root's default: outside /root, which the server's unprivileged user cannot enter."""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "demo",
        help="run the whole service on embedded PostgreSQL and Redis until Ctrl-C",
        description="Starts a PostgreSQL and a Redis of its own in --data (unless DATABASE_URL "
        "or REDIS_URL name servers to use), fills the games table with demo games, starts the "
        "worker, which publishes every closed month, and serves the API and pages on "
        "127.0.0.1. Ctrl-C stops everything it started; a second run reuses the data folder.",
    )
    p.add_argument(
        "--data",
        type=Path,
        metavar="DIR",
        help="the demo's data folder (default $XDG_DATA_HOME/gomoku-archive/demo, "
        f"else ~/.local/share/gomoku-archive/demo; as root {ROOT_DATA_DIR})",
    )
    p.add_argument(
        "--env",
        action="store_true",
        help="print the export lines that point this shell's gomoku-archive at the demo "
        'running on --data (eval "$(gomoku-archive demo --env)"), then exit',
    )
    p.add_argument("--port", type=port_arg, default=8080, help="the API's port (default 8080)")
    p.add_argument(
        "--games-per-month",
        type=int,
        default=DEFAULT_GAMES_PER_MONTH,
        metavar="N",
        help=f"valid games seeded per month on first use (default {DEFAULT_GAMES_PER_MONTH})",
    )
    p.set_defaults(run=cmd_demo)


class _StopRequested(Exception):
    """SIGINT or SIGTERM arrived: stop everything and exit 0."""


def cmd_demo(args: argparse.Namespace) -> int:
    environ = os.environ  # the CLI is the composition root: children get this environment
    as_root = os.geteuid() == 0
    data = (args.data or default_data_dir(environ, root=as_root)).absolute()
    if args.env:
        return print_environment(data, given_data=args.data is not None)
    settings = load_settings()
    if args.games_per_month < 0:
        raise DemoFailed("--games-per-month must be 0 or more")
    if args.port == 0:
        raise DemoFailed("--port must be a fixed port, 1..65535: the demo prints its addresses")
    created = make_folder(data, root=as_root)
    lock, killed = acquire(data)
    try:
        _say_where(data, created=bool(created), root=as_root)
        if killed:
            stopped = stop_leftovers(killed)
            left = ", ".join(f"{p.name} {p.pid}" for p in stopped) or "none still running"
            print(
                f"took over the data folder from a demo that was killed ({describe(killed)}); "
                f"its processes stopped: {left}",
                flush=True,
            )
        _require_free_port(args.port)
    except BaseException:
        lock.release()
        raise
    lock.record(pid=os.getpid(), address=f"http://127.0.0.1:{args.port}/database/", data=str(data))
    env_arguments = f" --data {shlex.quote(str(data))}" if args.data else ""
    given = {name: _given(environ, name) for name in ("DATABASE_URL", "REDIS_URL")}
    ours = [name for name, url in given.items() if url is not None and is_own(url, data)]
    if ours:
        plural = len(ours) > 1
        are, servers = ("are", "its servers start") if plural else ("is", "its server starts")
        print(
            f"{' and '.join(ours)} in this shell {are} this demo's own (an earlier run's "
            f"export lines): {servers} as usual",
            flush=True,
        )
    demo = DemoRun(
        settings=settings,
        data=data,
        port=args.port,
        ops_token=settings.ops_token or secrets.token_urlsafe(32),
        database_url=None if "DATABASE_URL" in ours else given["DATABASE_URL"],
        redis_url=None if "REDIS_URL" in ours else given["REDIS_URL"],
        environ=environ,
        lock=lock,
        env_arguments=env_arguments,
    )
    t0 = time.monotonic()
    with _stop_on_signals():
        try:
            demo.start_servers()
            demo.prepare_games(args.games_per_month, datetime.now(UTC))
            demo.start_services()
            demo.wait_until_published(datetime.now(UTC))
            demo.print_addresses(ready_after=time.monotonic() - t0)
            demo.watch()
        except _StopRequested:
            print("\nstopping ...", flush=True)
        finally:
            _ignore_signals()  # a second Ctrl-C must not cut the clean-up short
            t1 = time.monotonic()
            demo.stop()
            print(f"stopped in {time.monotonic() - t1:.1f} s", flush=True)
    return 0


def print_environment(data: Path, *, given_data: bool) -> int:
    """``demo --env``: the running demo's export lines on stdout, for ``eval``."""
    record = running_record(data)
    where = f"--data {data}" if given_data else f"{data} (the default; else give --data)"
    if record is None:
        raise DemoFailed(f"no demo is running on {where}")
    if not record.get("database_url") or not record.get("redis_url"):
        raise DemoFailed(f"the demo on {data} ({describe(record)}) has not started its servers yet")
    for line in environment_lines(str(record["database_url"]), str(record["redis_url"])):
        print(line)
    return 0


def make_folder(folder: Path, *, root: bool) -> list[Path]:
    """Create ``folder`` and its missing parents; returns those it created, parents first. As
    root it gives them mode 0755 (whatever the umask), so the server's user can enter them;
    it changes no folder that already existed."""
    missing = [p for p in reversed([folder, *folder.parents]) if not p.exists()]
    for path in missing:
        try:
            path.mkdir(mode=0o755)
        except FileExistsError:
            continue
        except OSError as exc:
            raise DemoFailed(
                f"cannot create the data folder {folder}: {exc.strerror} (choose one with --data)"
            ) from exc
        if root:
            path.chmod(0o755)
    if not folder.is_dir():
        raise DemoFailed(f"the data folder {folder} is not a folder (choose one with --data)")
    return missing


def _say_where(data: Path, *, created: bool, root: bool) -> None:
    how = "new" if created else "existing"
    if root:
        how += "; as root PostgreSQL runs there as the user embedded_postgres"
    print(f"data folder: {data} ({how})", flush=True)


def default_data_dir(environ: Mapping[str, str], *, root: bool = False) -> Path:
    """``/var/lib/gomoku-archive/demo`` for root (``/root`` is closed to the unprivileged user
    that runs PostgreSQL); else ``$XDG_DATA_HOME/gomoku-archive/demo`` when that is an
    absolute path (the XDG base directory rule), else ``~/.local/share/gomoku-archive/demo``."""
    if root:
        return ROOT_DATA_DIR
    base = environ.get("XDG_DATA_HOME", "")
    home = Path(base) if base.startswith("/") else Path.home() / ".local" / "share"
    return home / "gomoku-archive" / "demo"


def _given(environ: Mapping[str, str], name: str) -> str | None:
    # Settings fills in a default for each URL; only the environment says whether one was chosen.
    value = environ.get(name, "").strip()
    return value or None


def _require_free_port(port: int) -> None:
    # Before starting anything: the API would otherwise fail only after the seeding.
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as aiohttp will
        try:
            probe.bind(("127.0.0.1", port))
        except OSError as exc:
            raise DemoFailed(
                f"cannot listen on 127.0.0.1:{port}: {os.strerror(exc.errno or 0)} "
                "(choose another with --port)"
            ) from exc


@contextmanager
def _stop_on_signals() -> Iterator[None]:
    def request_stop(signum: int, frame: FrameType | None) -> None:
        raise _StopRequested(signal.Signals(signum).name)

    previous = {s: signal.signal(s, request_stop) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _ignore_signals() -> None:
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, signal.SIG_IGN)
