"""The ``pip install`` line that adds an extra to the installation at hand. The package is not on
the package index yet, so ``pip install 'gomoku-party-archive[server]'`` finds nothing: the line
names where this copy came from, as pip recorded it (PEP 610's ``direct_url.json``: the wheel's
address, the served one included, or the checkout)."""

from __future__ import annotations

import importlib.metadata
import json
import shlex
from collections.abc import Mapping
from urllib.parse import unquote, urlsplit

DISTRIBUTION = "gomoku-party-archive"


def install_line(extra: str, direct_url: Mapping[str, object] | None) -> str:
    """The command that installs ``extra`` beside this copy: from the same wheel or checkout
    when pip recorded one (``direct_url``, PEP 610), else by name."""
    url = direct_url.get("url") if direct_url else None
    if not isinstance(url, str) or not url:
        return f"pip install {shlex.quote(f'{DISTRIBUTION}[{extra}]')}"
    parts = urlsplit(url)
    dir_info = direct_url.get("dir_info") if direct_url else None
    if parts.scheme == "file" and isinstance(dir_info, Mapping):
        folder = unquote(parts.path)
        editable = "-e " if dir_info.get("editable") else ""
        return f"pip install {editable}{shlex.quote(f'{folder}[{extra}]')}"
    return f"pip install {shlex.quote(f'{DISTRIBUTION}[{extra}] @ {url}')}"


def recorded_origin() -> dict[str, object] | None:
    """pip's record of where this copy was installed from, when it was a URL or a path."""
    try:
        text = importlib.metadata.distribution(DISTRIBUTION).read_text("direct_url.json")
    except importlib.metadata.PackageNotFoundError:
        return None
    if not text:
        return None
    try:
        found = json.loads(text)
    except ValueError:
        return None
    return found if isinstance(found, dict) else None
