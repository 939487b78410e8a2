"""The public front end's factory: routes, middleware, and the resources opened and closed in
``cleanup_ctx`` (the asyncpg pool unless one is given, the manifest cache and its LISTEN
connection). Every public route is GET/HEAD only; nothing here can start or change an export."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable

from aiohttp import hdrs, web

from gomoku_archive.db.pool import Pool, create_pool
from gomoku_archive.errors import ConfigError
from gomoku_archive.http.file_urls import FILES_PATH, MIRROR_FILES_PATH
from gomoku_archive.settings import Settings
from gomoku_archive.storage.file_cache import FileCache
from gomoku_archive.storage.s3 import S3Store
from gomoku_archive.web import freshness_refresher
from gomoku_archive.web.api import bulk as bulk_api
from gomoku_archive.web.api import downloads, health, tools, torrents
from gomoku_archive.web.api import manifest as manifest_api
from gomoku_archive.web.api.openapi import DOCUMENT_REVISED, OPENAPI_CACHING, build_document
from gomoku_archive.web.keys import (
    BULK_FILES,
    DOWNLOAD_CACHE,
    DRAINING,
    MANIFEST,
    METRICS,
    MIRROR_STORE,
    POOL,
    REDIRECT_SIGNER,
    SETTINGS,
    TOOLS,
    TORRENT_PIECES,
)
from gomoku_archive.web.manifest_cache import ManifestCache
from gomoku_archive.web.metrics import Metrics
from gomoku_archive.web.middleware import add_common_headers, observe
from gomoku_archive.web.ops import setup_ops
from gomoku_archive.web.pages import handlers as pages
from gomoku_archive.web.pages import templating
from gomoku_archive.web.piece_cache import PieceCache
from gomoku_archive.web.redirect_signer import RedirectSigner
from gomoku_archive.web.server import bad_requests
from gomoku_archive.web.server.encoded import BulkFiles, encode, respond_encoded
from gomoku_archive.web.tools_wheel import ToolsShelf

CleanupCtx = Callable[[web.Application], AsyncIterator[None]]

MANIFEST_TTL_SECONDS = 60.0
POOL_MAX_SIZE = 10


def create_app(
    settings: Settings, *, pool: Pool | None = None, manifest_ttl: float = MANIFEST_TTL_SECONDS
) -> web.Application:
    """The application; ``pool`` lets a caller (a test) share its own pool, which the app then
    uses but does not close."""
    bad_requests.install()
    app = web.Application(middlewares=[observe])
    app[SETTINGS] = settings
    app[DRAINING] = asyncio.Event()
    app[METRICS] = Metrics()
    app[BULK_FILES] = BulkFiles()
    app[TORRENT_PIECES] = PieceCache()
    app[pages.DATABASE_PAGE] = pages.DatabasePage()
    app[pages.FILES_INDEX] = pages.FilesIndex()
    app[TOOLS] = ToolsShelf()
    app[tools.TOOLS_PAGES] = tools.ToolsPages()
    templating.install(app)
    app.on_response_prepare.append(add_common_headers)
    app.on_response_prepare.append(close_when_draining)
    app.cleanup_ctx.append(_database(pool))
    app.cleanup_ctx.append(_manifest_cache(manifest_ttl))
    app.cleanup_ctx.append(freshness_refresher.keep_fresh)
    app.cleanup_ctx.append(tools.load)
    if settings.redirect_downloads:
        app.cleanup_ctx.append(_mirror_store)
    if settings.download_cache_dir is not None:
        app.cleanup_ctx.append(_download_cache)
    _routes(app)
    setup_ops(app, settings)
    return app


async def close_when_draining(request: web.Request, response: web.StreamResponse) -> None:
    """While draining (``gomoku_archive.web.server.run``), end each connection after its
    response: a keep-alive client reconnects, and its load balancer picks a pod that stays."""
    if request.app[DRAINING].is_set():
        response.force_close()


def _routes(app: web.Application) -> None:
    openapi = encode(json.dumps(build_document()).encode())

    async def openapi_json(request: web.Request) -> web.Response:
        """The document, served like the manifest (ETag, a gzip twin, 304s) with the date its
        text last changed (``DOCUMENT_REVISED``)."""
        caching: dict[str, str] = {
            hdrs.CACHE_CONTROL: OPENAPI_CACHING,
            hdrs.VARY: hdrs.ACCEPT_ENCODING,
        }
        return respond_encoded(
            request,
            openapi,
            content_type="application/json; charset=utf-8",
            caching=caching,
            last_modified=DOCUMENT_REVISED,
        )

    r = app.router
    r.add_get("/api/v1/database", manifest_api.manifest)
    r.add_get("/api/v1/database/manifest.json", manifest_api.manifest)
    r.add_get("/api/v1/database/sha256sums.txt", bulk_api.checksums)
    r.add_get("/api/v1/database/list.txt", bulk_api.url_list_file)
    r.add_get("/api/v1/database/parquet.txt", bulk_api.parquet_list_file)
    r.add_get("/api/v1/database/feed.atom", bulk_api.feed)
    # The checksum and torrent routes first: "{file}.sha256" would otherwise be taken as a
    # file name.
    r.add_get(FILES_PATH + "{file}.sha256", downloads.checksum_file)
    r.add_get(FILES_PATH + "{file}.torrent", torrents.torrent_file)
    r.add_get(FILES_PATH + "{file}", downloads.archive_file)
    r.add_get("/api/v1/openapi.json", openapi_json)
    r.add_get("/", pages.root)
    r.add_get("/database", pages.to_database_page)
    r.add_get("/database/", pages.database_page)
    r.add_get("/database/profile", pages.profile_page)
    # The mirrors' index and the same files under it (rclone and wget --no-parent stay below
    # /database/), and the downloaders' wheel.
    r.add_get(MIRROR_FILES_PATH, pages.files_index)
    r.add_get(MIRROR_FILES_PATH + "{file}.sha256", downloads.checksum_file)
    r.add_get(MIRROR_FILES_PATH + "{file}", downloads.archive_file)
    r.add_get(tools.TOOLS_PATH, tools.listing)
    r.add_get(tools.TOOLS_PATH + "{file}", tools.tool_file)
    r.add_get(r"/database/{year:\d{4}}/", pages.year_page)
    r.add_get(r"/database/{year:\d{4}}", pages.to_year_page)
    r.add_get("/robots.txt", pages.robots_txt)
    r.add_get("/favicon.ico", pages.favicon)
    r.add_get("/healthz", health.healthz)
    r.add_get("/readyz", health.readyz)
    if app[SETTINGS].metrics_port is None:  # else on its own port: health.metrics_app
        r.add_get("/metrics", health.metrics)
    # One route table: aiohttp answers other methods with 405 and `Allow: GET,HEAD` (CONNECT,
    # which no route can match, gets the same from gomoku_archive.web.middleware).
    assert all(route.method in (hdrs.METH_GET, hdrs.METH_HEAD) for route in r.routes())


def _database(given: Pool | None) -> CleanupCtx:
    async def ctx(app: web.Application) -> AsyncIterator[None]:
        if given is not None:
            app[POOL] = given
            yield
            return
        pool = await create_pool(app[SETTINGS].database_url, min_size=1, max_size=POOL_MAX_SIZE)
        app[POOL] = pool
        try:
            yield
        finally:
            await pool.close()

    return ctx


async def _mirror_store(app: web.Application) -> AsyncIterator[None]:
    """The bucket's addresses for redirects: presigned with the credentials of boto3's chain,
    or under CDN_BASE_URL (no S3 request is ever made by the API)."""
    store = S3Store(app[SETTINGS], threads=1)
    try:
        await store.prepare_signing()
        app[MIRROR_STORE] = store
        app[REDIRECT_SIGNER] = RedirectSigner(store, app[METRICS])
        yield
    finally:
        store.close()


async def _download_cache(app: web.Application) -> AsyncIterator[None]:
    """Local copies of archives for sendfile (see shared/gomoku_archive/storage/file_cache.py)."""
    settings = app[SETTINGS]
    assert settings.download_cache_dir is not None
    cache = FileCache(settings.download_cache_dir, settings.download_cache_bytes)
    try:
        cache.start()
    except OSError as exc:  # not "cannot listen": the socket is not opened yet
        reason = exc.strerror or str(exc)
        raise ConfigError(
            f"DOWNLOAD_CACHE_DIR {settings.download_cache_dir} cannot be used: {reason} "
            "(give it a writable volume, or unset it to serve from PostgreSQL alone)"
        ) from exc
    app[DOWNLOAD_CACHE] = cache
    try:
        yield
    finally:
        await cache.close()


def _manifest_cache(ttl: float) -> CleanupCtx:
    async def ctx(app: web.Application) -> AsyncIterator[None]:
        metrics = app[METRICS]
        cache = ManifestCache(app[POOL], app[SETTINGS].database_url, ttl=ttl, metrics=metrics)
        await cache.start()
        app[MANIFEST] = cache
        metrics.manifest_age.set_function(cache.age)
        try:
            yield
        finally:
            await cache.close()

    return ctx
