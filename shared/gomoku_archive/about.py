"""Gomoku Party's monthly SGF game archives: the ``gomoku-party-sgf-1`` profile, its export,
its HTTP service and the downloaders' tools.

``gomoku_archive`` is a namespace package over three roots, one per role: ``shared/`` (the
domain, the I/O edges and the command line), ``services/`` (the aiohttp front end) and
``workers/`` (the arq worker and the month export); docs/architecture.md maps the sub-packages.
A namespace package has no ``__init__`` to hold a docstring or a version, so they live here."""

from __future__ import annotations

import importlib.metadata

DISTRIBUTION = "gomoku-party-archive"
"""The name the project is installed under (``pip install gomoku-party-archive``)."""


def version() -> str:
    """The installed distribution's version; ``unknown`` when run from a source tree that was
    never installed."""
    try:
        return importlib.metadata.version(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"
