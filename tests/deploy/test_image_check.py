"""``deploy/image-check.sh`` on a shared host: it takes its ports and database prefix from
options and refuses, before it installs or starts anything, what it cannot use. (The check
itself takes minutes and is run by hand: ``bash deploy/image-check.sh``.)"""

from __future__ import annotations

import socket

import pytest

from tests.deploy.deploy_support import DEPLOY, run_tool

pytestmark = pytest.mark.slow  # runs bash processes

SCRIPT = str(DEPLOY / "image-check.sh")


@pytest.mark.parametrize(
    ("options", "says"),
    [
        (["--api-port", "80"], "80 is not a port from 1024 to 65535"),
        (["--redis-port", "http"], "http is not a port"),
        (["--api-port", "20000", "--redis-port", "20000"], "the two ports must differ"),
        (["--db-prefix", "Gpa;drop"], "--db-prefix must be a lower-case identifier"),
        (["--no-such-option"], "unknown option --no-such-option"),
    ],
)
def test_bad_options_are_refused(options: list[str], says: str) -> None:
    done = run_tool("bash", SCRIPT, *options, timeout=60)
    assert done.returncode == 2
    assert says in done.stderr
    if options[0].startswith("--no-such"):
        assert "[--api-port P] [--redis-port P] [--db-prefix NAME] [--pg DSN]" in done.stderr


def test_a_port_in_use_is_refused_before_anything_starts() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        done = run_tool("bash", SCRIPT, "--redis-port", str(port), timeout=60)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1] == (
        f"image-check: port {port} is in use (choose another with --api-port or --redis-port)"
    )
    assert "==>" not in done.stdout, "no step ran"
