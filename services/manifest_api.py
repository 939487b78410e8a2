"""``GET|HEAD /api/v1/database`` (and ``/api/v1/database/manifest.json``): the cached manifest,
gzip-coded when the client accepts it. Never touches the database."""

from __future__ import annotations

from aiohttp import hdrs, web

from services.conditional import respond_bytes
from services.encoded import negotiate
from services.keys import MANIFEST
from shared.web.conditions import Representation

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


async def manifest(request: web.Request) -> web.Response:
    snapshot = request.app[MANIFEST].snapshot
    body, etag, coding = negotiate(request, snapshot)
    content: dict[str, str] = {hdrs.CONTENT_TYPE: JSON, **coding}
    if not any(name in request.headers for name in _CONDITIONAL):
        # What respond_bytes answers a request without preconditions or Range (evaluate()'s
        # plain 200), without building the decision: this is the API's busiest route.
        return web.Response(body=body, headers={**CACHING, **content, "ETag": str(etag)})
    return respond_bytes(
        request,
        body,
        Representation(etag, len(body), ranges=False),
        caching=CACHING,
        content=content,
    )
