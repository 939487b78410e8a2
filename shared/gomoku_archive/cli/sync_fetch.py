"""The HTTP side of ``gomoku-archive sync``, with the standard library only (the light install
has no HTTP client of its own): the manifest by a conditional GET, and a file into its ``.part``
by GETs that resume what a previous try or run left (``Range`` with ``If-Range``: RFC 9110
§14.2 and §13.1.5), retried when the connection drops."""

from __future__ import annotations

import errno
import http.client
import json
import os
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from gomoku_archive.about import version
from gomoku_archive.errors import DownloadFailed, ServiceUnreachable

TIMEOUT_SECONDS = 30.0
"""For connecting and for each read: a server that stops sending is given up on, then retried."""
ATTEMPTS = 4
"""Tries per file in one run (the first and three resumptions); a later run resumes again."""
READ_BLOCK = 256 * 1024
_RETRIED_STATUSES = {408, 429, 500, 502, 503, 504}
_NO_ROOM = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG}
"""A full file system, a quota, a file size limit: the folder cannot take the file."""


class Stopped(Exception):
    """The run is being interrupted (Ctrl-C): a download stops between two blocks."""


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
    stop: threading.Event,
    progress: Progress,
    attempts: int = ATTEMPTS,
) -> int:
    """Bring ``part`` to the file's ``size`` bytes from ``url``; returns the bytes fetched.

    A part already there is resumed with ``Range: bytes=<its size>-`` and ``If-Range: etag``
    (the file's strong ETag, its quoted SHA-256): a server whose file changed answers 200 with
    the whole of it instead, and the part starts over. A dropped connection is resumed the
    same way, up to ``attempts`` tries. The caller checks the SHA-256; nothing here trusts the
    bytes."""
    fetched = 0
    for attempt in range(attempts):
        have = part.stat().st_size if part.exists() else 0
        if have > size:
            part.unlink()
            progress(-have)
            have = 0
        if have == size:
            return fetched
        headers = {"Range": f"bytes={have}-", "If-Range": etag} if have else {}
        try:
            request = _request(url, headers)  # http(s) only
            with urllib.request.urlopen(request, timeout=TIMEOUT_SECONDS) as response:  # noqa: S310
                if response.status == 206 and _range_start(response) == have:
                    mode = "ab"
                else:  # 200: the whole file (a Range the server did not honour, or a new file)
                    mode = "wb"
                    progress(-have)
                fetched += _write(response, part, mode, stop, progress)
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
    stop: threading.Event,
    progress: Progress,
) -> int:
    written = 0
    with part.open(mode) as out:
        while block := response.read(READ_BLOCK):
            out.write(block)
            written += len(block)
            progress(len(block))
            if stop.is_set():
                raise Stopped
        out.flush()
        os.fsync(out.fileno())
    return written
