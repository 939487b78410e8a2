"""Which bytes of a mirrored file the periodic content check reads (``check_mirror_content``):
a window of ``MIRROR_CONTENT_SAMPLE_BYTES`` that moves on by its own length each time it is
found right, so that a file of N windows is read whole, window by window, in N passes, then
again; the whole file at every pass when the sample is 0 or the file is no longer than it.

Where a copy's window stands is kept with the copy (``content_offset``, migration 0009), not
derived from the clock: a pass that is late, runs twice or does not run at all moves no window
past unread bytes. A window found wrong or left unread stays where it is. Pure."""

from __future__ import annotations

from dataclasses import dataclass


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

    @property
    def first(self) -> bool:
        """The window starts a cycle over the file."""
        return self.start == 0

    @property
    def last(self) -> bool:
        """The window ends the file: found right, it completes a cycle over the file."""
        return self.end == self.size

    def http_range(self) -> str:
        """The ``Range`` header asking for exactly this window (RFC 9110, 14.1.2)."""
        return f"bytes={self.start}-{self.end - 1}"


def windows_in(size: int, sample_bytes: int) -> int:
    """How many passes read a file of ``size`` bytes whole."""
    if sample_bytes <= 0 or sample_bytes >= size:
        return 1
    return -(-size // sample_bytes)


def window_at(size: int, sample_bytes: int, offset: int) -> Window:
    """The window read next of a file whose cycle has reached byte ``offset``: ``sample_bytes``
    from there, the last one moved back to end with the file (so it overlaps the one before and
    every pass costs the same), the whole file when the sample is 0 or the file no longer. An
    offset outside the file (a file is never shorter than a window read of it, but a stored
    offset is only a number) starts over."""
    if sample_bytes <= 0 or sample_bytes >= size:
        return Window(0, size, size)
    start = offset if 0 <= offset < size else 0
    start = min(start, size - sample_bytes)
    return Window(start, start + sample_bytes, size)


def offset_after(window: Window) -> int:
    """Where the next window starts once ``window`` was found right: at its end, or back at the
    file's start when it was the last."""
    return 0 if window.last else window.end
