"""Typed keys of the application's and the request's state."""

from __future__ import annotations

import asyncio

from aiohttp import web

from gomoku_archive.db.pool import Pool
from gomoku_archive.settings import Settings
from gomoku_archive.storage.file_cache import FileCache
from gomoku_archive.storage.s3 import S3Store
from gomoku_archive.web.manifest_cache import ManifestCache
from gomoku_archive.web.metrics import Metrics
from gomoku_archive.web.piece_cache import PieceCache
from gomoku_archive.web.redirect_signer import RedirectSigner
from gomoku_archive.web.server.encoded import BulkFiles
from gomoku_archive.web.tools_wheel import ToolsShelf

SETTINGS = web.AppKey("settings", Settings)
POOL = web.AppKey("pool", Pool)
MANIFEST = web.AppKey("manifest_cache", ManifestCache)
METRICS = web.AppKey("metrics", Metrics)
TORRENT_PIECES = web.AppKey("torrent_pieces", PieceCache)
"""Piece hashes of the files whose torrents were asked for (immutable per file)."""
BULK_FILES = web.AppKey("bulk_files", BulkFiles)
"""sha256sums.txt, list.txt and feed.atom as rendered for the current manifest."""
MIRROR_STORE = web.AppKey("mirror_store", S3Store)
"""Set only when downloads are redirected to the S3 mirror (``S3_BUCKET`` and ``S3_REDIRECT``)."""
REDIRECT_SIGNER = web.AppKey("redirect_signer", RedirectSigner)
"""Set with ``MIRROR_STORE``: the redirects' URLs, or None when they cannot be signed."""
DRAINING = web.AppKey("draining", asyncio.Event)
"""Set when a stop signal arrived: ``/readyz`` fails while requests are still served."""
TOOLS = web.AppKey("tools", ToolsShelf)
"""The downloaders' wheel served under /database/tools/ (read when the app starts)."""
DOWNLOAD_CACHE = web.AppKey("download_cache", FileCache)
"""Set only with ``DOWNLOAD_CACHE_DIR``: verified local copies served with sendfile."""

BODY_BYTES = web.ResponseKey("body_bytes", int)
"""Body bytes a streamed response really wrote (the access log and the metrics read it)."""
STREAMING = web.RequestKey("streaming", web.StreamResponse)
"""The streamed response of a download, so the access log can account for it even when the
handler is cancelled midway."""
ABORTED = web.ResponseKey("aborted", str)
"""Why a streamed body stopped short of its Content-Length (the access log reads it)."""
