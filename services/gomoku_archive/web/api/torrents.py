"""``GET|HEAD /api/v1/database/files/{file}.torrent``: a deterministic v1 torrent of a published
or superseded file, whose web seeds (the API's own download URL under the public origin, and
the CDN's copy once it passed its anonymous read, when downloads are redirected there) let any
client finish without a swarm. A presigned bucket URL is never a web seed: it expires, and a
torrent lives for years.

The piece hashes are the costly part: see ``gomoku_archive.web.piece_cache``."""

from __future__ import annotations

import hashlib

from aiohttp import hdrs, web

from gomoku_archive.catalog.manifest import PROFILE
from gomoku_archive.catalog.torrent import build_torrent
from gomoku_archive.db.archive_store import ArchiveRow
from gomoku_archive.http.conditions import Representation, strong_etag
from gomoku_archive.http.file_urls import download_url
from gomoku_archive.http.headers import attachment
from gomoku_archive.logs import get_logger
from gomoku_archive.profile.names import TORRENT_SUFFIX
from gomoku_archive.storage.chunks import ChunkReadError
from gomoku_archive.web.api.downloads import find_archive
from gomoku_archive.web.keys import MIRROR_STORE, POOL, TORRENT_PIECES
from gomoku_archive.web.request_origin import origin_of, vary
from gomoku_archive.web.server.conditional import respond_bytes
from gomoku_archive.web.server.http_errors import ApiError, ServiceUnavailable

log = get_logger(__name__)

TORRENT_CONTENT_TYPE = "application/x-bittorrent"
TORRENT_CACHING = "public, max-age=3600"
"""Not immutable like the file: a web seed is added once the file's mirror copy is verified."""


def web_seeds(request: web.Request, row: ArchiveRow) -> list[str]:
    """The API's own URL first, then the CDN's verified copy when downloads go there."""
    assert row.file_name is not None
    seeds = [origin_of(request) + download_url(row.file_name)]
    store = request.app.get(MIRROR_STORE)
    if store is not None:
        key = store.key_for(row.file_name)
        cdn_url = store.cdn_url(key)
        if cdn_url is not None and not row.mirror.not_redirected_because(
            store.identity, store.bucket, key, cdn_url
        ):
            seeds.append(cdn_url)
    return seeds


async def torrent_file(request: web.Request) -> web.Response:
    name = request.match_info["file"]
    row = await find_archive(request, name)
    try:
        pieces = await request.app[TORRENT_PIECES].get(request.app[POOL], row)
    except ChunkReadError as exc:
        log.error("torrent_unreadable", file=name, error=str(exc))
        if exc.database:
            raise ServiceUnavailable(
                "the archive database is unavailable; try again shortly",
                headers={hdrs.RETRY_AFTER: "5"},
            ) from exc
        raise ApiError("the archive cannot be read") from exc
    body = build_torrent(
        name=name,
        size=row.bytes,
        pieces=pieces,
        web_seeds=web_seeds(request, row),
        comment=f"Gomoku Party database, {row.month} ({PROFILE}, CC0-1.0), sha256 {row.sha256}",
    )
    etag = strong_etag(hashlib.sha256(body).hexdigest()[:32])
    rep = Representation(etag, len(body), row.last_modified, ranges=False)
    caching: dict[str, str] = {hdrs.CACHE_CONTROL: TORRENT_CACHING}
    if (varies := vary(request)) != "":
        caching[hdrs.VARY] = varies
    return respond_bytes(
        request,
        body,
        rep,
        caching=caching,
        content={
            hdrs.CONTENT_TYPE: TORRENT_CONTENT_TYPE,
            hdrs.CONTENT_DISPOSITION: attachment(name + TORRENT_SUFFIX),
        },
    )
