"""Bencoding (BEP 3), the encoder only: integers, byte strings (``str`` as UTF-8), lists and
dictionaries (``str`` keys) sorted as raw bytes, as the format requires. Pure."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

Bencodable = int | bytes | str | Sequence["Bencodable"] | Mapping[str, "Bencodable"]


def bencode(value: Bencodable) -> bytes:
    parts: list[bytes] = []
    _encode(value, parts)
    return b"".join(parts)


def _encode(value: Bencodable, out: list[bytes]) -> None:
    if isinstance(value, bool):  # a bool is an int to Python, and nothing to bencoding
        raise TypeError("bencoding has no booleans")
    if isinstance(value, int):
        out.append(b"i%de" % value)
    elif isinstance(value, bytes | str):
        raw = value.encode("utf-8") if isinstance(value, str) else value
        out.append(b"%d:" % len(raw))
        out.append(raw)
    elif isinstance(value, Mapping):
        # Sorted as raw bytes (BEP 3), which is not always str order once UTF-8 is involved.
        items = sorted(((k.encode("utf-8"), v) for k, v in value.items()), key=lambda i: i[0])
        out.append(b"d")
        for key, item in items:
            _encode(key, out)
            _encode(item, out)
        out.append(b"e")
    elif isinstance(value, Sequence):
        out.append(b"l")
        for item in value:
            _encode(item, out)
        out.append(b"e")
    else:
        raise TypeError(f"cannot bencode {type(value).__name__}")
