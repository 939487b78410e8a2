"""The service's own processes under the demo: ``gomoku-archive`` commands run as children with
the demo's environment, each logging to a file, each in a session of its own so that Ctrl-C on
the terminal reaches only the demo, which then stops them in order (the processes first, the
servers they use last); a demo killed outright takes them along (``parent_death``)."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from gomoku_archive.demo import DemoFailed
from gomoku_archive.demo.parent_death import die_with_parent


@dataclass(frozen=True, kw_only=True)
class ServiceProcess:
    name: str
    process: subprocess.Popen[bytes]
    log_file: Path

    def exited(self) -> int | None:
        return self.process.poll()

    def failure(self) -> DemoFailed:
        """What to tell the user when the process exited on its own."""
        return DemoFailed(
            f"the {self.name} exited with status {self.process.returncode}: "
            f"{last_line(self.log_file)} (log: {self.log_file})"
        )


def command(*args: str) -> list[str]:
    """``gomoku-archive ARGS`` with the interpreter that runs the demo, whatever PATH says."""
    return [sys.executable, "-m", __name__.partition(".")[0], *args]


def start_service(
    name: str, args: Sequence[str], *, env: Mapping[str, str], log_file: Path
) -> ServiceProcess:
    with log_file.open("ab") as log:  # the child keeps its own descriptor
        process = subprocess.Popen(  # noqa: S603 - our own interpreter and arguments
            command(*args),
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=die_with_parent(signal.SIGTERM),  # the demo's death stops it too
        )
    return ServiceProcess(name=name, process=process, log_file=log_file)


def run_step(name: str, args: Sequence[str], *, env: Mapping[str, str], log_file: Path) -> None:
    """Run a ``gomoku-archive`` command to completion; its output goes to ``log_file``."""
    step = start_service(name, args, env=env, log_file=log_file)
    try:
        if step.process.wait() != 0:
            raise step.failure()
    finally:
        stop_services([step], timeout=5.0)


def stop_services(services: Sequence[ServiceProcess], *, timeout: float) -> None:
    """SIGTERM to every one still running (each stops cleanly on it), then SIGKILL to those
    still there after ``timeout`` seconds; returns once all have exited."""
    running = [s for s in services if s.exited() is None]
    for service in running:
        service.process.terminate()
    deadline = time.monotonic() + timeout
    for service in running:
        try:
            service.process.wait(max(deadline - time.monotonic(), 0.0))
        except subprocess.TimeoutExpired:
            service.process.kill()
            service.process.wait()


def last_line(path: Path) -> str:
    """The last non-empty line of a log, shortened: usually the process's one-line error."""
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").strip().splitlines()
    except OSError:
        return "(no log)"
    return lines[-1][:300] if lines else "(empty log)"
