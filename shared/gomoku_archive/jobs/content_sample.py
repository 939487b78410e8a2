"""Which bytes of a mirrored file the periodic content check reads (``check_mirror_content``):
a window of ``MIRROR_CONTENT_SAMPLE_BYTES`` that moves on by its own length at every pass, so
that a file of N windows is read whole, window by window, in N passes, then again; the whole
file at every pass when the sample is 0 or the file is no longer than it. Pure."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True, slots=True)
class Window:
    """Bytes ``[start, end)`` of a file of ``size`` bytes."""

    start: int
    end: int
    size: int

    @property
    def length(self) -> int:
        return self.end - self.start

    @property
    def whole(self) -> bool:
        return self.start == 0 and self.end == self.size

    def http_range(self) -> str:
        """The ``Range`` header asking for exactly this window (RFC 9110, 14.1.2)."""
        return f"bytes={self.start}-{self.end - 1}"


def windows_in(size: int, sample_bytes: int) -> int:
    """How many passes read a file of ``size`` bytes whole."""
    if sample_bytes <= 0 or sample_bytes >= size:
        return 1
    return -(-size // sample_bytes)


def sample_window(size: int, sample_bytes: int, pass_number: int) -> Window:
    """The window pass ``pass_number`` reads. Windows are ``sample_bytes`` long and follow each
    other from the start; the last is moved back to end with the file (so it overlaps the one
    before), which keeps every pass's cost the same."""
    windows = windows_in(size, sample_bytes)
    if windows == 1:
        return Window(0, size, size)
    start = min((pass_number % windows) * sample_bytes, size - sample_bytes)
    return Window(start, start + sample_bytes, size)


def pass_number(now: datetime, period_seconds: int) -> int:
    """The pass a check run at ``now`` is, counting periods since the Unix epoch: passes a
    period apart read consecutive windows, whichever worker runs them, with no state kept."""
    return int(now.timestamp()) // period_seconds
