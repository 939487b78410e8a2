"""``sha256sums.txt``, ``list.txt``, ``parquet.txt`` and ``feed.atom`` under
``/api/v1/database/``: rendered from
the cached manifest (never a query), kept per manifest version and origin, and served like the
manifest (``gomoku_archive.web.server.encoded``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal

from aiohttp import hdrs, web

from gomoku_archive.catalog.bulk_lists import parquet_url_list, sha256sums, url_list
from gomoku_archive.catalog.feed import build_feed
from gomoku_archive.catalog.manifest import last_changed
from gomoku_archive.web.keys import BULK_FILES, MANIFEST
from gomoku_archive.web.request_origin import origin_of, vary
from gomoku_archive.web.server.encoded import respond_encoded

BULK_CACHING = "public, max-age=60"
"""The manifest's: each list changes exactly when the manifest does."""
TEXT = "text/plain; charset=utf-8"
ATOM = "application/atom+xml; charset=utf-8"
Kind = Literal["sha256sums", "list", "parquet", "feed"]
Renderer = Callable[[Mapping[str, Any], str], bytes]
"""(manifest document, origin) -> body."""

_RENDERERS: dict[Kind, Renderer] = {
    "sha256sums": lambda document, origin: sha256sums(document).encode("ascii"),
    "list": lambda document, origin: url_list(document, origin).encode("utf-8"),
    "parquet": lambda document, origin: parquet_url_list(document, origin).encode("utf-8"),
    "feed": build_feed,
}


def _serve(request: web.Request, kind: Kind, content_type: str, *, absolute: bool) -> web.Response:
    snapshot = request.app[MANIFEST].snapshot
    origin = origin_of(request) if absolute else ""
    encoded = request.app[BULK_FILES].get(
        kind, origin, str(snapshot.etag), lambda: _RENDERERS[kind](snapshot.document, origin)
    )
    caching: dict[str, str] = {
        hdrs.CACHE_CONTROL: BULK_CACHING,
        hdrs.VARY: vary(request, hdrs.ACCEPT_ENCODING) if absolute else hdrs.ACCEPT_ENCODING,
    }
    return respond_encoded(
        request,
        encoded,
        content_type=content_type,
        caching=caching,
        last_modified=last_changed(snapshot.document),
    )


async def checksums(request: web.Request) -> web.Response:
    return _serve(request, "sha256sums", TEXT, absolute=False)


async def url_list_file(request: web.Request) -> web.Response:
    return _serve(request, "list", TEXT, absolute=True)


async def parquet_list_file(request: web.Request) -> web.Response:
    return _serve(request, "parquet", TEXT, absolute=True)


async def feed(request: web.Request) -> web.Response:
    return _serve(request, "feed", ATOM, absolute=True)
