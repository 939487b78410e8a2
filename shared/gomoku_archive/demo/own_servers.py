"""The addresses of a data folder's own servers, remembered across runs, so that a demo started
from a shell that still holds an earlier run's ``export DATABASE_URL=... REDIS_URL=...`` lines
(the demo prints them) knows them for its own, and starts its servers instead of failing on a
server that is not running. ``addresses.json`` in the data folder keeps the last ones."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

ADDRESSES_NAME = "addresses.json"


def remember(data: Path, addresses: dict[str, str]) -> None:
    """Keep the addresses of the servers this run started (by setting name)."""
    (data / ADDRESSES_NAME).write_text(json.dumps(addresses), encoding="utf-8")


def remembered(data: Path) -> set[str]:
    try:
        found = json.loads((data / ADDRESSES_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return set()
    if not isinstance(found, dict):
        return set()
    return {value for value in found.values() if isinstance(value, str)}


def socket_path(url: str) -> Path | None:
    """The unix socket (or its folder) an address names: ``postgresql://...?host=/dir`` or
    ``unix:///path/redis.sock``; None for a TCP address."""
    parts = urlsplit(url)
    if parts.scheme == "unix":
        return Path(parts.path) if parts.path else None
    if parts.scheme in ("postgres", "postgresql"):
        hosts = parse_qs(parts.query).get("host", [])
        if hosts and hosts[0].startswith("/"):
            return Path(hosts[0])
    return None


def is_own(url: str, data: Path) -> bool:
    """Whether ``url`` is one of ``data``'s own servers: its last addresses, or a socket
    inside the folder."""
    if url in remembered(data):
        return True
    path = socket_path(url)
    return path is not None and (path == data or data in path.parents)
