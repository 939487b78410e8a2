"""The HTTP side of ``gomoku-archive sync``, with the standard library only (the light install
has no HTTP client of its own): the manifest by a conditional GET, and a file into its ``.part``
by GETs that resume what a previous try or run left (``Range`` with ``If-Range``: RFC 9110
§14.2 and §13.1.5), retried when the connection drops. A file's bytes are written as they
arrive, and Ctrl-C (``StopSignal``) ends every download at once, whatever the link's speed."""

from __future__ import annotations

import contextlib
import errno
import http.client
import json
import os
import socket
import threading
import time
import urllib.error
import urllib.request
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from gomoku_archive.about import version
from gomoku_archive.errors import DownloadFailed, ServiceUnreachable

TIMEOUT_SECONDS = 30.0
"""For connecting and for each read: a server that stops sending is given up on, then retried."""
ATTEMPTS = 4
"""Tries per file in one run (the first and three resumptions); a later run resumes again."""
READ_BLOCK = 256 * 1024
"""The most one read takes; a read returns what has arrived (``read1``), however little."""
_RETRIED_STATUSES = {408, 429, 500, 502, 503, 504}
_NO_ROOM = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG}
"""A full file system, a quota, a file size limit: the folder cannot take the file."""


class Stopped(Exception):
    """The run is being interrupted (Ctrl-C): a download stops where it is, its part kept."""


class StopSignal:
    """Ctrl-C for the downloads in flight. ``set()`` marks the run as stopping and shuts down
    every connection a download holds, so that a read waiting on a slow or silent server
    returns at once rather than when its data or its 30 s timeout comes; each download then
    stops with what it has written (``Stopped``)."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self._lock = threading.Lock()
        # Weak: a connection's socket leaves the set when urllib drops it.
        self._sockets: weakref.WeakSet[socket.socket] = weakref.WeakSet()

    def is_set(self) -> bool:
        return self._event.is_set()

    def set(self) -> None:
        with self._lock:
            self._event.set()
            sockets = list(self._sockets)
        for sock in sockets:
            _shut_down(sock)

    def watch(self, sock: socket.socket) -> None:
        """Shut ``sock`` down on ``set()`` (at once, when the run is already stopping)."""
        with self._lock:
            if not self._event.is_set():
                self._sockets.add(sock)
                return
        _shut_down(sock)


def _shut_down(sock: socket.socket) -> None:
    """End both directions of ``sock``'s connection: a read blocked on it in another thread
    returns. The plain socket's method, for a TLS socket too (``SSLSocket.shutdown`` also drops
    its TLS state under that reader); a socket closed since (its descriptor -1) raises OSError,
    which is nothing to do."""
    with contextlib.suppress(OSError):
        socket.socket.shutdown(sock, socket.SHUT_RDWR)


class _WatchedHTTPConnection(http.client.HTTPConnection):
    """An HTTP connection whose socket a ``StopSignal`` can shut down."""

    def __init__(self, host: str, *, stop: StopSignal | None = None, **kwargs: Any) -> None:
        super().__init__(host, **kwargs)
        self._stop = stop

    def connect(self) -> None:
        super().connect()
        if self._stop is not None:
            self._stop.watch(self.sock)


class _WatchedHTTPSConnection(http.client.HTTPSConnection):
    """An HTTPS connection whose socket a ``StopSignal`` can shut down (after the handshake)."""

    def __init__(self, host: str, *, stop: StopSignal | None = None, **kwargs: Any) -> None:
        super().__init__(host, **kwargs)
        self._stop = stop

    def connect(self) -> None:
        super().connect()
        if self._stop is not None:
            self._stop.watch(self.sock)


class _WatchedHTTPHandler(urllib.request.HTTPHandler):
    def __init__(self, stop: StopSignal) -> None:
        super().__init__()
        self._stop = stop

    def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(_WatchedHTTPConnection, req, stop=self._stop)


class _WatchedHTTPSHandler(urllib.request.HTTPSHandler):
    def __init__(self, stop: StopSignal) -> None:
        super().__init__()
        self._stop = stop

    def do_open(
        self, http_class: object, req: urllib.request.Request, **kwargs: Any
    ) -> http.client.HTTPResponse:
        # https_open's own arguments (the context, and check_hostname before Python 3.12), with
        # our connection class instead of its.
        return super().do_open(_WatchedHTTPSConnection, req, stop=self._stop, **kwargs)


def _opener(stop: StopSignal) -> urllib.request.OpenerDirector:
    """urllib's opener (redirects, proxies from the environment) with connections that ``stop``
    shuts down; a redirect to the file's copy elsewhere (S3, a CDN) goes through it too."""
    return urllib.request.build_opener(_WatchedHTTPHandler(stop), _WatchedHTTPSHandler(stop))


class DiskFull(DownloadFailed):
    """The folder's file system is full: every download stops (their parts are kept)."""


def user_agent() -> str:
    return f"gomoku-archive/{version()} (sync)"


def _request(url: str, headers: dict[str, str]) -> urllib.request.Request:
    """A request for an http(s) address only: a download address comes from the manifest, and
    ``file:`` or another scheme must never be opened on its say-so."""
    if urlsplit(url).scheme not in ("http", "https"):
        raise DownloadFailed(f"{url!r} is not an http:// or https:// address")
    return urllib.request.Request(url, headers={"User-Agent": user_agent(), **headers})  # noqa: S310


@dataclass(frozen=True, slots=True)
class Fetched:
    """The manifest's body (None: 304, the copy the caller holds is current) and its ETag."""

    body: bytes | None
    etag: str | None


def fetch_manifest(url: str, etag: str | None) -> Fetched:
    """GET the manifest, with ``If-None-Match`` when a copy's ETag is known. Raises
    ``ServiceUnreachable`` when there is no answer, or an error status."""
    headers = {"Accept": "application/json"}
    if etag:
        headers["If-None-Match"] = etag
    try:
        request = _request(url, headers)  # http(s) only
        with urllib.request.urlopen(request, timeout=TIMEOUT_SECONDS) as response:  # noqa: S310
            return Fetched(response.read(), response.headers.get("ETag"))
    except urllib.error.HTTPError as exc:
        if exc.code == 304:
            return Fetched(None, etag)
        raise ServiceUnreachable(f"{url} answered {exc.code} {exc.reason}") from None
    except (urllib.error.URLError, OSError, http.client.HTTPException) as exc:
        reason = getattr(exc, "reason", None) or exc
        raise ServiceUnreachable(f"cannot reach {url}: {reason}") from None


def parse_json(body: bytes) -> object:
    """The body as JSON; None when it is not (the caller says what it expected)."""
    try:
        return json.loads(body)
    except (UnicodeDecodeError, ValueError):
        return None


Progress = Callable[[int], None]
"""Told each block's size as it is written (and a negative count when a try starts over)."""


def download(
    url: str,
    part: Path,
    *,
    size: int,
    etag: str,
    stop: StopSignal,
    progress: Progress,
    attempts: int = ATTEMPTS,
) -> int:
    """Bring ``part`` to the file's ``size`` bytes from ``url``; returns the bytes fetched.

    A part already there is resumed with ``Range: bytes=<its size>-`` and ``If-Range: etag``
    (the file's strong ETag, its quoted SHA-256): a server whose file changed answers 200 with
    the whole of it instead, and the part starts over. A dropped connection is resumed the
    same way, up to ``attempts`` tries. Raises ``Stopped`` once ``stop`` is set, the bytes
    received until then in the part. The caller checks the SHA-256; nothing here trusts the
    bytes."""
    fetched = 0
    opener = _opener(stop)
    for attempt in range(attempts):
        if stop.is_set():
            raise Stopped
        have = part.stat().st_size if part.exists() else 0
        if have > size:
            part.unlink()
            progress(-have)
            have = 0
        if have == size:
            return fetched
        headers = {"Range": f"bytes={have}-", "If-Range": etag} if have else {}
        try:
            try:
                request = _request(url, headers)  # http(s) only
                with opener.open(request, timeout=TIMEOUT_SECONDS) as response:
                    if response.status == 206 and _range_start(response) == have:
                        mode = "ab"
                    else:  # 200: the whole file (a Range the server did not honour, or a new file)
                        mode = "wb"
                        progress(-have)
                    fetched += _write(response, part, mode, stop, progress)
            except (OSError, http.client.HTTPException):
                if stop.is_set():  # the connection was shut down by Ctrl-C, not by the server
                    raise Stopped from None
                raise
        except urllib.error.HTTPError as exc:
            if exc.code == 416:  # the part is no prefix of the file: start over
                part.unlink(missing_ok=True)
                progress(-have)
            elif exc.code == 404:
                raise DownloadFailed(
                    f"{url} answered 404: the file is no longer published there"
                ) from None
            elif exc.code not in _RETRIED_STATUSES or attempt == attempts - 1:
                raise DownloadFailed(f"{url} answered {exc.code} {exc.reason}") from None
        except OSError as exc:
            if exc.errno in _NO_ROOM:
                raise DiskFull(
                    f"no space left for {part.name} in {part.parent} ({exc.strerror}; the "
                    "partial download is kept, and the next run resumes it)"
                ) from None
            if attempt == attempts - 1:
                raise DownloadFailed(_dropped(url, exc)) from None
        except http.client.HTTPException as exc:  # IncompleteRead, a bad status line, ...
            if attempt == attempts - 1:
                raise DownloadFailed(_dropped(url, exc)) from None
        if not stop.is_set():
            time.sleep(min(2.0**attempt, 8.0) / 4)
    if part.exists() and part.stat().st_size == size:
        return fetched
    raise DownloadFailed(f"{url}: the download kept stopping short ({attempts} tries)")


def _dropped(url: str, exc: BaseException) -> str:
    reason = getattr(exc, "reason", None) or exc or type(exc).__name__
    return f"{url}: {reason} ({ATTEMPTS} tries; the partial download is kept for the next run)"


def _range_start(response: http.client.HTTPResponse) -> int | None:
    """The first byte of a 206's ``Content-Range: bytes first-last/length``."""
    value = response.headers.get("Content-Range", "")
    unit, _, span = value.partition(" ")
    first = span.partition("-")[0]
    return int(first) if unit == "bytes" and first.isascii() and first.isdigit() else None


def _write(
    response: http.client.HTTPResponse,
    part: Path,
    mode: str,
    stop: StopSignal,
    progress: Progress,
) -> int:
    """Append the response's body to ``part`` as it arrives; returns the bytes written.

    ``read1`` returns what the connection has, however little (``read(READ_BLOCK)`` waited for
    all 256 KiB: 26 s on a 10 kB/s link, the part and the progress still at 0 until then), and
    each block is flushed to the file at once, so a stop, a kill or a dropped connection leaves
    in the part every byte that arrived."""
    written = 0
    with part.open(mode) as out:
        while block := response.read1(READ_BLOCK):
            out.write(block)
            out.flush()
            written += len(block)
            progress(len(block))
            if stop.is_set():
                raise Stopped
        if stop.is_set():  # the connection was shut down under the read: an early end
            raise Stopped
        if response.length:  # read1 ends quietly where read raised: the body stopped short
            raise http.client.IncompleteRead(b"", response.length)
        os.fsync(out.fileno())
    return written
