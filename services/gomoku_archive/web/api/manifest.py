"""``GET|HEAD /api/v1/database`` (and ``/api/v1/database/manifest.json``): the cached manifest,
gzip-coded when the client accepts it. Never touches the database."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from aiohttp import hdrs, web
from multidict import CIMultiDict

from gomoku_archive.catalog.manifest import last_changed
from gomoku_archive.http.conditions import EntityTag, Representation, format_http_date
from gomoku_archive.web.keys import MANIFEST
from gomoku_archive.web.manifest_cache import Snapshot
from gomoku_archive.web.server.conditional import respond_bytes
from gomoku_archive.web.server.encoded import wants_gzip

MANIFEST_CACHING = "public, max-age=60"
"""Short enough that a newly published month shows up within a minute or two of caches."""
JSON = "application/json; charset=utf-8"
CACHING: dict[str, str] = {hdrs.CACHE_CONTROL: MANIFEST_CACHING, hdrs.VARY: hdrs.ACCEPT_ENCODING}
_CONDITIONAL = (
    hdrs.IF_MATCH,
    hdrs.IF_NONE_MATCH,
    hdrs.IF_MODIFIED_SINCE,
    hdrs.IF_UNMODIFIED_SINCE,
    hdrs.RANGE,
    hdrs.IF_RANGE,
)


@dataclass(frozen=True, slots=True)
class _Variant:
    """One coding of one snapshot, with the headers of its plain 200 built once."""

    body: bytes
    etag: EntityTag
    last_modified: datetime | None
    content: dict[str, str]
    headers: CIMultiDict[str]


def _variant(snapshot: Snapshot, gzip: bool) -> _Variant:
    body, etag = (
        (snapshot.gzip_body, snapshot.gzip_etag) if gzip else (snapshot.body, snapshot.etag)
    )
    content: dict[str, str] = {hdrs.CONTENT_TYPE: JSON}
    if gzip:
        content[hdrs.CONTENT_ENCODING] = "gzip"
    # Last-Modified, the newest publication or rebuild, as the pages and lists send it: mirrors
    # that only keep dates (wget -N, rclone) skip an unchanged manifest too.
    changed = last_changed(snapshot.document)
    headers = {**CACHING, **content, "ETag": str(etag)}
    if changed is not None:
        headers[hdrs.LAST_MODIFIED] = format_http_date(changed)
    return _Variant(body, etag, changed, content, CIMultiDict(headers))


_variants: list[tuple[Snapshot, _Variant, _Variant]] = []
"""The current snapshot's two variants (a new snapshot replaces them)."""


def _variants_of(snapshot: Snapshot) -> tuple[_Variant, _Variant]:
    if not _variants or _variants[0][0] is not snapshot:
        _variants[:] = [(snapshot, _variant(snapshot, False), _variant(snapshot, True))]
    _, plain, gzipped = _variants[0]
    return plain, gzipped


async def manifest(request: web.Request) -> web.Response:
    plain, gzipped = _variants_of(request.app[MANIFEST].snapshot)
    variant = (
        gzipped if wants_gzip(request) else plain
    )  # gomoku_archive.web.server.encoded.negotiate's choice
    headers = request.headers
    if not any(name in headers for name in _CONDITIONAL):
        # What respond_bytes answers a request without preconditions or Range (evaluate()'s
        # plain 200), without building the decision: this is the API's busiest route.
        return web.Response(body=variant.body, headers=variant.headers)
    return respond_bytes(
        request,
        variant.body,
        Representation(variant.etag, len(variant.body), variant.last_modified, ranges=False),
        caching=CACHING,
        content=variant.content,
    )
