"""Suite-wide rules: which tests the quick loop leaves out, and hypothesis's profiles.

The quick loop is ``pytest -m "not slow and not browser"``: no server, no process, about a
minute. ``slow`` marks every test that spawns a process, starts or needs a server, or takes more
than about a second on an idle machine:

- every test under the suites in ``SERVER_SUITES`` (the hook below marks them);
- elsewhere, a ``@pytest.mark.slow`` (or a module's ``pytestmark``) on the test itself.

An unmarked test that starts a process or listens on a socket fails, in every run, with a
message saying to mark it (``_unmarked_tests_spawn_nothing``), so the rule cannot rot. The one
second is not enforced (it would measure the machine): ``--durations=30`` on the quick loop shows
what grew."""

from __future__ import annotations

import multiprocessing.util
import os
import re
import socket
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn

import pytest
from hypothesis import HealthCheck, settings

TESTS = Path(__file__).resolve().parent
SERVER_SUITES = {
    "integration": "the real PostgreSQL and the run's own redis-server, Chromium, moto, the CLI",
    "reliability": "servers and processes killed, hung or loaded; fuzzing with big budgets",
    "benchmarks": "nginx, wrk and the service's own servers",
}
"""Folders whose every test needs servers, processes or many seconds (the reason why)."""


# --- hypothesis ----------------------------------------------------------------------------------
# Wall-clock checks are off in every profile: a deadline or the too_slow health check measures
# the machine as much as the code, and fails sound code on a loaded 2-core machine. Speed is
# asserted by the tests written for it (e.g. test_parsing_time_grows_linearly), with margins.
#
# - ci: hypothesis's own (it loads it when it sees CI): derandomized, so a red build always means
#   the code changed, never that a new random example turned up; no example database.
# - dev: everywhere else; random examples, failures saved in .hypothesis/ and replayed first.
# - quick: the quick loop's (loaded when -m deselects slow tests): a tenth of every budget, see
#   tests/budget.py; the full run keeps the budgets as written.
QUICK_SHARE = 10
"""The quick loop runs 1/QUICK_SHARE of each test's examples."""

settings.register_profile("ci", settings.get_profile("ci"), print_blob=True)
settings.register_profile(
    "dev",
    settings.get_profile("default"),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    print_blob=True,
)
BASE_PROFILE = "ci" if settings.get_current_profile_name() == "ci" else "dev"
settings.register_profile(
    "quick",
    settings.get_profile(BASE_PROFILE),
    max_examples=settings.get_profile(BASE_PROFILE).max_examples // QUICK_SHARE,
)
settings.load_profile(BASE_PROFILE)


def quick_loop(config: pytest.Config) -> bool:
    """Whether this run leaves slow tests out (``-m "not slow ..."``)."""
    return re.search(r"\bnot\s+slow\b", config.option.markexpr or "") is not None


def pytest_configure(config: pytest.Config) -> None:
    # Before any test module is imported, so tests/budget.py sees the quick profile.
    if quick_loop(config) and not config.getoption("hypothesis_profile", None):
        settings.load_profile("quick")


# --- the slow marker -----------------------------------------------------------------------------


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """The quick loop does not even import the server suites (seconds of imports and set-up)."""
    if quick_loop(config) and collection_path.parent == TESTS:
        return collection_path.name in SERVER_SUITES or None
    return None


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        path = item.path
        if path.is_relative_to(TESTS) and path.relative_to(TESTS).parts[0] in SERVER_SUITES:
            item.add_marker(pytest.mark.slow)


SPAWNS = (
    (subprocess.Popen, "_execute_child", "starts a process"),  # also asyncio's and os.popen
    (multiprocessing.util, "spawnv_passfds", "starts a process"),  # spawn and forkserver pools
    (os, "fork", "forks"),
    (os, "posix_spawn", "starts a process"),
    (os, "posix_spawnp", "starts a process"),
    (os, "system", "starts a process"),
    (socket.socket, "listen", "listens on a socket (a server)"),
)


@pytest.fixture(autouse=True)
def _unmarked_tests_spawn_nothing(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A test the quick loop runs may not start a process or a server."""
    node = request.node
    if node.get_closest_marker("slow") or node.get_closest_marker("browser"):
        return

    def refusal(what: str) -> Callable[..., NoReturn]:
        def refuse(*args: object, **kwargs: object) -> NoReturn:
            raise AssertionError(
                f"{node.nodeid} {what}: mark it @pytest.mark.slow (tests/conftest.py says why)"
            )

        return refuse

    for owner, name, what in SPAWNS:
        if hasattr(owner, name):
            monkeypatch.setattr(owner, name, refusal(what))
