"""``/favicon.ico``: a 32 x 32 icon drawn here (a wooden board's corner, its grid lines, a black
and a white stone), encoded as a PNG inside an ICO container, so no binary file is checked in
and browsers stop logging a 404 for every page."""

from __future__ import annotations

import struct
import zlib

SIZE = 32
_BOARD = (222, 184, 110, 255)
_LINE = (90, 60, 20, 255)
_BLACK = (25, 25, 25, 255)
_WHITE = (250, 250, 250, 255)
_EDGE = (60, 60, 60, 255)
_STONES = ((11, 11, _BLACK), (21, 21, _WHITE))
_RADIUS = 6.0


def _pixel(x: int, y: int) -> tuple[int, int, int, int]:
    for cx, cy, colour in _STONES:
        distance = ((x + 0.5 - cx) ** 2 + (y + 0.5 - cy) ** 2) ** 0.5
        if distance <= _RADIUS:
            return _EDGE if colour is _WHITE and distance > _RADIUS - 1 else colour
    if x % 10 == 1 or y % 10 == 1:
        return _LINE
    return _BOARD


def _chunk(kind: bytes, data: bytes) -> bytes:
    body = kind + data
    return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))


def icon_png() -> bytes:
    rows = b"".join(b"\0" + b"".join(bytes(_pixel(x, y)) for x in range(SIZE)) for y in range(SIZE))
    header = struct.pack(">IIBBBBB", SIZE, SIZE, 8, 6, 0, 0, 0)  # 8-bit RGBA
    return (
        b"\x89PNG\r\n\x1a\n"
        + _chunk(b"IHDR", header)
        + _chunk(b"IDAT", zlib.compress(rows, 9))
        + _chunk(b"IEND", b"")
    )


def favicon_ico() -> bytes:
    """An ICO file holding one 32 x 32 PNG image (allowed since Windows Vista; every current
    browser reads it)."""
    png = icon_png()
    header = struct.pack("<HHH", 0, 1, 1)
    entry = struct.pack("<BBBBHHII", SIZE, SIZE, 0, 0, 1, 32, len(png), 6 + 16)
    return header + entry + png
