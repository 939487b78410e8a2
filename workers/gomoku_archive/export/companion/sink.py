"""A file-like sink for pyarrow's writers whose bytes are taken out as they come, so that a
writer streams into the database chunk by chunk instead of building the file in memory."""

from __future__ import annotations


class Drain:
    """What pyarrow writes, held until ``take`` (pyarrow calls ``write``, ``tell``, ``flush``
    and ``close``, and reads ``closed``)."""

    def __init__(self) -> None:
        self._held = bytearray()
        self._position = 0
        self.closed = False

    def write(self, data: bytes | memoryview) -> int:
        self._held += data
        self._position += len(data)
        return len(data)

    def tell(self) -> int:
        return self._position

    def flush(self) -> None:
        pass

    def close(self) -> None:
        self.closed = True

    def writable(self) -> bool:
        return True

    def take(self) -> bytes:
        """Everything written since the last take."""
        data = bytes(self._held)
        self._held.clear()
        return data
