"""The machine a run happened on, recorded beside its figures: ratios hold across machines
better than times do, but not perfectly, and a loaded machine is worth knowing about."""

from __future__ import annotations

import os
import platform
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Any


def _cpu_model() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def _memory() -> str:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            return f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
    return "unknown"


def _version(*command: str) -> str:
    """The first line a tool prints about its version (nginx and wrk print it to stderr or
    exit non-zero, so neither the stream nor the status is trusted)."""
    try:
        out = subprocess.run(command, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return "not installed"
    text = (out.stdout.strip() or out.stderr.strip()).splitlines()
    return text[0] if text else "unknown"


def load_average() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def describe(dsn: str) -> dict[str, Any]:
    """``nproc``, memory, CPU model, Python, PostgreSQL (the server's own version string),
    nginx and wrk, the date (UTC) and the load average as the run starts."""
    import aiohttp

    return {
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "nproc": os.cpu_count(),
        "memory": _memory(),
        "cpu": _cpu_model(),
        "kernel": platform.release(),
        "python": platform.python_version(),
        "aiohttp": aiohttp.__version__,
        "postgresql": _version("psql", dsn, "-Atc", "SHOW server_version"),
        "nginx": _version("nginx", "-v"),
        "wrk": _version("wrk", "-v").split(" [")[0],
        "load_average_at_start": load_average(),
    }
