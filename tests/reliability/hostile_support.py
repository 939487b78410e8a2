"""Running the command line on hostile files: a subprocess whose exit code, output, wall time and
peak resident memory are measured.

The peak is the child's own ``VmHWM``, read from /proc as it exits. ``ru_maxrss`` will not do:
Linux keeps it across exec, so a child forked from a large pytest process starts with the
parent's resident size as its peak (and ``RUSAGE_CHILDREN`` mixes in every child ever reaped)."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
import zlib
from dataclasses import dataclass
from pathlib import Path

from gomoku_archive.profile.stream import GZIP_HEADER

PEAK_MARK = "peak-rss-kib:"
_WRAPPER = f"""
import atexit, re, runpy, sys

def _peak():
    status = open("/proc/self/status").read()
    print("{PEAK_MARK}", re.search(r"VmHWM:\\s+(\\d+)", status)[1], file=sys.stderr)

atexit.register(_peak)
sys.argv[0] = "gomoku-archive"
runpy.run_module("gomoku_archive.cli.main", run_name="__main__")
"""
CLI = [sys.executable, "-c", _WRAPPER]
MIB = 1 << 20


@dataclass(frozen=True)
class Outcome:
    """What one run of the command did."""

    returncode: int
    stdout: str
    stderr: str
    seconds: float
    peak_rss: int
    """Peak resident set size of the child, in bytes."""

    @property
    def clear(self) -> bool:
        """A clear result: an exit code the command documents and no Python traceback."""
        return self.returncode in (0, 1, 2, 3) and "Traceback" not in self.stderr + self.stdout


def run_cli(*args: str, timeout: float = 120) -> Outcome:
    """Run ``gomoku-archive ARGS`` and measure it; fails the test if it outlives ``timeout``."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        proc = subprocess.Popen([*CLI, *args], stdout=out, stderr=err, stdin=subprocess.DEVNULL)
        deadline = started + timeout
        while True:
            pid, status, _ = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() > deadline:
                proc.kill()
                os.wait4(proc.pid, 0)
                proc.returncode = -9
                raise AssertionError(f"gomoku-archive {' '.join(args)} ran over {timeout} s")
            time.sleep(0.02)
        seconds = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stderr, _, peak = err.read().decode(errors="replace").rpartition(PEAK_MARK)
        return Outcome(
            returncode=proc.returncode,
            stdout=out.read().decode(errors="replace"),
            stderr=stderr,
            seconds=seconds,
            peak_rss=int(peak) * 1024,
        )


def write_gzip_bomb(path: Path, pattern: bytes, total: int) -> int:
    """Write ``pattern`` repeated to ``total`` bytes (a multiple of 1 MiB) as one gzip member
    with the profile's header; returns the compressed size.

    One MiB is compressed once, ending in a full flush: the flush aligns the output to a byte
    and forgets the history, so copies of it follow each other as a valid deflate stream, and
    an empty final block (``03 00``) ends it. A 1 GiB bomb is then about 1 MB, made in a
    fraction of a second."""
    block = (pattern * (MIB // len(pattern) + 1))[:MIB]
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    piece = compressor.compress(block) + compressor.flush(zlib.Z_FULL_FLUSH)
    crc = 0
    with path.open("wb") as file:
        file.write(GZIP_HEADER)
        for _ in range(total // MIB):
            crc = zlib.crc32(block, crc)
            file.write(piece)
        file.write(b"\x03\x00")
        file.write(crc.to_bytes(4, "little") + (total & 0xFFFFFFFF).to_bytes(4, "little"))
    return path.stat().st_size
