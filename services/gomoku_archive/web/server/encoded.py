"""An in-memory body served like the manifest: rendered once with a gzip twin, each with its
strong ETag (a hash of its exact bytes), answered through ``web.server.conditional`` (304, 412,
``Vary: Accept-Encoding``). The manifest and the bulk files (lists, feed) share it."""

from __future__ import annotations

import functools
import gzip
import hashlib
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from aiohttp import hdrs, web

from gomoku_archive.http.conditions import EntityTag, Representation, accepts_gzip, strong_etag
from gomoku_archive.web.server.conditional import respond_bytes


@dataclass(frozen=True, slots=True)
class Encoded:
    body: bytes
    gzip_body: bytes
    etag: EntityTag
    gzip_etag: EntityTag


def encode(body: bytes) -> Encoded:
    """The body and its gzip coding (fixed mtime: same bytes in, same bytes out)."""
    digest = hashlib.sha256(body).hexdigest()[:32]
    return Encoded(
        body=body,
        gzip_body=gzip.compress(body, compresslevel=9, mtime=0),
        etag=strong_etag(digest),
        gzip_etag=strong_etag(f"{digest}-gzip"),
    )


class Coded(Protocol):
    """A body with its gzip twin and their ETags (``Encoded``, the manifest's ``Snapshot``)."""

    @property
    def body(self) -> bytes: ...
    @property
    def gzip_body(self) -> bytes: ...
    @property
    def etag(self) -> EntityTag: ...
    @property
    def gzip_etag(self) -> EntityTag: ...


def negotiate(request: web.Request, coded: Coded) -> tuple[bytes, EntityTag, dict[str, str]]:
    """The coding the client accepts: its body, its ETag, and ``Content-Encoding`` if gzip."""
    if wants_gzip(request):
        return coded.gzip_body, coded.gzip_etag, {hdrs.CONTENT_ENCODING: "gzip"}
    return coded.body, coded.etag, {}


def wants_gzip(request: web.BaseRequest) -> bool:
    """``accepts_gzip`` of the request's Accept-Encoding fields (joined, when repeated)."""
    accept = request.headers.getall(hdrs.ACCEPT_ENCODING, ())
    if not accept:
        return False
    return _accepts_gzip(accept[0] if len(accept) == 1 else ", ".join(accept))


_accepts_gzip = functools.lru_cache(maxsize=256)(accepts_gzip)
"""Clients send a handful of distinct Accept-Encoding values; each is parsed once."""


def respond_encoded(
    request: web.Request,
    encoded: Encoded,
    *,
    content_type: str,
    caching: Mapping[str, str],
    headers: Mapping[str, str] | None = None,
    last_modified: datetime | None = None,
) -> web.Response:
    """200 (gzip-coded when the client accepts it), 304 or 412. ``caching`` must carry
    ``Vary: Accept-Encoding`` (and whatever else the body depends on); ``headers`` go with a
    200 only, like the content type. ``last_modified`` is sent as Last-Modified and answers
    If-Modified-Since (the ETag still decides when both are sent, RFC 9110 §13.2.2)."""
    body, etag, coding = negotiate(request, encoded)
    content: dict[str, str] = {hdrs.CONTENT_TYPE: content_type, **(headers or {}), **coding}
    return respond_bytes(
        request,
        body,
        Representation(etag, len(body), last_modified=last_modified, ranges=False),
        caching=caching,
        content=content,
    )


class BulkFiles:
    """The bulk files' rendered bodies keyed by (kind, origin), each valid for one manifest
    version. Bounded: without PUBLIC_BASE_URL every Host a client sends is an origin, and a
    client must not be able to grow the server's memory by inventing them."""

    def __init__(self, bound: int = 64) -> None:
        self._bound = bound
        self._entries: OrderedDict[tuple[str, str], tuple[str, Encoded]] = OrderedDict()

    def get(self, kind: str, origin: str, version: str, render: Callable[[], bytes]) -> Encoded:
        key = (kind, origin)
        found = self._entries.get(key)
        if found is not None and found[0] == version:
            self._entries.move_to_end(key)
            return found[1]
        encoded = encode(render())
        self._entries[key] = (version, encoded)
        self._entries.move_to_end(key)
        while len(self._entries) > self._bound:
            self._entries.popitem(last=False)
        return encoded
