"""One demo per data folder: ``demo.lock`` in the folder, held with ``flock`` for as long as the
demo runs, holding a JSON record of it (its PID, address, the servers' URLs and the processes it
started).

The kernel releases an ``flock`` when its holder dies, however it dies, so a lock that can be
taken is never in use: a record found in it is a killed demo's (a demo that stops cleanly
empties it), and the processes it names that are still running, the same processes (PID and
start time both match), are stopped before the new demo starts its own. A second demo that
finds the lock held refuses in one line naming the running one. ``demo --env`` reads the
record to point the command line at the running demo."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import signal
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gomoku_archive.demo import DemoFailed

LOCK_NAME = "demo.lock"
LEFTOVER_STOP_SECONDS = 5.0


def command_line(pid: int) -> list[str]:
    """The process's arguments, or [] when there is no such process (Linux ``/proc``)."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return []
    return [part.decode(errors="replace") for part in raw.split(b"\0") if part]


def start_ticks(pid: int) -> int | None:
    """When the process started (clock ticks since boot), which tells a PID's new owner from
    its old one; None when there is no such process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    # Field 22 counts from the PID; the command name in parentheses may hold spaces.
    fields = stat.rpartition(")")[2].split()
    if fields[:1] in (["Z"], ["X"]):
        return None  # exited, not yet reaped
    try:
        return int(fields[19])
    except (IndexError, ValueError):
        return None


@dataclass(frozen=True, kw_only=True)
class Started:
    """A process the demo started, as the record names it."""

    name: str
    pid: int
    ticks: int | None

    @classmethod
    def of(cls, name: str, pid: int) -> Started:
        return cls(name=name, pid=pid, ticks=start_ticks(pid))

    def alive(self) -> bool:
        return self.ticks is not None and start_ticks(self.pid) == self.ticks


class DemoRunning(DemoFailed):
    """Another demo holds the data folder."""


class DemoLock:
    """The held lock; ``record`` rewrites what it says about this demo."""

    def __init__(self, path: Path, fd: int) -> None:
        self.path = path
        self._fd = fd
        self._record: dict[str, Any] = {}

    def record(self, **fields: Any) -> None:
        self._record |= fields
        data = json.dumps(self._record, indent=1).encode()
        os.ftruncate(self._fd, 0)
        os.pwrite(self._fd, data, 0)
        os.fsync(self._fd)

    def add_process(self, name: str, pid: int) -> None:
        processes = list(self._record.get("processes", []))
        started = Started.of(name, pid)
        processes.append({"name": name, "pid": pid, "ticks": started.ticks})
        self.record(processes=processes)

    def release(self) -> None:
        """Empty the record (a clean stop leaves nothing to take over), then unlock."""
        if self._fd < 0:
            return
        try:
            os.ftruncate(self._fd, 0)
        finally:
            os.close(self._fd)  # closing releases the flock
            self._fd = -1


def _read(fd: int) -> dict[str, Any] | None:
    size = os.fstat(fd).st_size
    raw = os.pread(fd, size, 0) if size else b""
    try:
        record = json.loads(raw) if raw.strip() else None
    except ValueError:
        return None
    return record if isinstance(record, dict) else None


def describe(record: Mapping[str, Any] | None) -> str:
    if not record:
        return "PID unknown: it is still starting"
    return f"PID {record.get('pid', '?')}, {record.get('address', 'no address yet')}"


def acquire(data: Path) -> tuple[DemoLock, dict[str, Any] | None]:
    """Take ``data``'s lock; returns it and the record of a killed demo found in it, if any.
    Raises DemoRunning when a running demo holds it."""
    path = data / LOCK_NAME
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    except OSError as exc:
        raise DemoFailed(f"cannot open the demo's lock {path}: {exc.strerror}") from exc
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        running = _read(fd)
        os.close(fd)
        pid = (running or {}).get("pid")
        how = f"Ctrl-C in its terminal, or kill {pid}" if pid else "Ctrl-C in its terminal"
        raise DemoRunning(
            f"a demo is already running on {data} ({describe(running)}): stop it ({how}), "
            "or give this one another --data"
        ) from None
    return DemoLock(path, fd), _read(fd)


def running_record(data: Path) -> dict[str, Any] | None:
    """The record of the demo running on ``data``, or None when none runs there."""
    path = data / LOCK_NAME
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return _read(fd) or {}
        return None  # nobody holds it: no demo runs there
    finally:
        os.close(fd)


def stop_leftovers(record: Mapping[str, Any]) -> list[Started]:
    """Stop the processes a killed demo started that still run (SIGTERM, then SIGKILL after a
    few seconds); returns those it stopped. PostgreSQL is not among them: a new demo adopts
    the server running on its cluster."""
    alive = []
    for entry in record.get("processes", []):
        try:
            started = Started(name=str(entry["name"]), pid=int(entry["pid"]), ticks=entry["ticks"])
        except (KeyError, TypeError, ValueError):
            continue
        if started.alive():
            alive.append(started)
    for process in alive:
        _signal(process.pid, signal.SIGTERM)
    deadline = time.monotonic() + LEFTOVER_STOP_SECONDS
    while any(p.alive() for p in alive) and time.monotonic() < deadline:
        time.sleep(0.05)
    for process in alive:
        if process.alive():
            _signal(process.pid, signal.SIGKILL)
    return alive


def _signal(pid: int, signum: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signum)
