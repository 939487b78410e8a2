"""The demo's children end with it, however it ends: Ctrl-C and SIGTERM stop them in order
(``DemoRun.stop``), and a demo killed outright (``kill -9``, a closed terminal, the OOM killer)
takes them along through the kernel's parent-death signal (Linux ``prctl(PR_SET_PDEATHSIG)``),
armed in each child between fork and exec, so no demo code has to run when the demo dies.

Each child gets the signal that stops it cleanly: SIGTERM for the service's processes and
Redis, SIGINT (fast shutdown) for PostgreSQL. The signal survives ``exec`` and the switch to
the unprivileged user PostgreSQL runs as under root (it is armed after that switch), and is
sent when the thread that started the child ends: the demo starts every child from its main
thread."""

from __future__ import annotations

import ctypes
import os
import signal
from collections.abc import Callable

PR_SET_PDEATHSIG = 1
"""From <linux/prctl.h>."""


def _prctl() -> Callable[..., int] | None:
    try:
        function: Callable[..., int] = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):  # not Linux: the clean stop is all there is
        return None
    return function


_PRCTL = _prctl()


def die_with_parent(signum: signal.Signals) -> Callable[[], None] | None:
    """A ``preexec_fn`` for ``subprocess.Popen``: the child gets ``signum`` when this process
    dies. None where the kernel has no such signal (then pass nothing)."""
    prctl = _PRCTL
    if prctl is None:
        return None
    parent = os.getpid()

    def arm() -> None:  # in the child, after fork, before exec: no locks, no imports
        prctl(PR_SET_PDEATHSIG, int(signum), 0, 0, 0)
        if os.getppid() != parent:  # the demo died before the signal was armed
            os._exit(1)

    return arm
