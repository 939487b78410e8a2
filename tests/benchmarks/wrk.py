"""Running Debian's ``wrk`` and reading its summary as numbers (a Lua ``done`` hook prints it
as JSON: the human summary rounds transfer rates to three digits)."""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

SUMMARY_LUA = """
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    '\\n{"requests":%d,"bytes":%d,"duration_us":%d,"connect":%d,"read":%d,'
    .. '"write":%d,"status":%d,"timeout":%d}\\n',
    summary.requests, summary.bytes, summary.duration,
    e.connect, e.read, e.write, e.status, e.timeout))
end
"""


@dataclass(frozen=True, slots=True)
class WrkResult:
    requests: int
    bytes: int
    seconds: float
    errors: dict[str, int]

    @property
    def requests_per_second(self) -> float:
        return self.requests / self.seconds

    @property
    def bytes_per_second(self) -> float:
        """Bytes read, headers and the partial responses in flight at the end included, as
        wrk's own Transfer/sec."""
        return self.bytes / self.seconds


def wrk_binary() -> str:
    found = shutil.which("wrk")
    if found is None:
        raise RuntimeError("wrk is not installed (apt-get install -y wrk; deploy/test.sh does)")
    return found


def run_wrk(
    url: str, *, connections: int, seconds: int, workdir: Path, timeout: float = 60.0
) -> WrkResult:
    """``connections`` keep-alive connections from one wrk thread for ``seconds``. One thread
    leaves the other core to the server under test: the machine has two."""
    script = workdir / "wrk-summary.lua"
    if not script.exists():
        script.write_text(SUMMARY_LUA)
    out = subprocess.run(
        [
            wrk_binary(),
            "-t1",
            f"-c{connections}",
            f"-d{max(seconds, 1)}s",
            f"--timeout={timeout:g}s",
            "-s",
            str(script),
            url,
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    line = next(x for x in reversed(out.splitlines()) if x.startswith("{"))
    data = json.loads(line)
    errors = {k: int(data[k]) for k in ("connect", "read", "write", "status", "timeout")}
    if any(errors.values()):
        raise RuntimeError(f"wrk saw errors against {url}: {errors}\n{out}")
    return WrkResult(int(data["requests"]), int(data["bytes"]), data["duration_us"] / 1e6, errors)
