"""A copy as a downloader reaches it: an anonymous GET or HEAD of the exact address a redirect
sends clients to (a CDN URL), without credentials, cookies or redirects of our own. The mirror
trusts a CDN address only after ``read`` returned the archive's length and SHA-256, and the
periodic check ``head``s it."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import aiohttp

READ_BLOCK = 1024 * 1024
TIMEOUT = aiohttp.ClientTimeout(total=None, connect=10, sock_read=60)
HEAD_TIMEOUT = aiohttp.ClientTimeout(total=20)


@dataclass(frozen=True, slots=True)
class PublicRead:
    """What an anonymous request got: the status, and for a GET the body's length and SHA-256
    (for a HEAD, ``size`` is the Content-Length it announced, if any)."""

    status: int
    size: int | None
    sha256: str | None = None
    etag: str | None = None

    def problem(self, size: int, sha256: str | None) -> str | None:
        """None when this is ``size`` bytes (with SHA-256 ``sha256``, when given); else why not."""
        if self.status != 200:
            return f"answered HTTP {self.status}"
        if self.size != size:
            return f"gave {self.size} bytes, expected {size}"
        if sha256 is not None and self.sha256 != sha256:
            return f"gave bytes with sha256 {self.sha256}, expected {sha256}"
        return None


def new_session() -> aiohttp.ClientSession:
    """A session that sends nothing a downloader would not: no cookies kept, no auth."""
    return aiohttp.ClientSession(
        cookie_jar=aiohttp.DummyCookieJar(), headers={"User-Agent": "gomoku-archive-mirror"}
    )


async def read(session: aiohttp.ClientSession, url: str) -> PublicRead:
    """GET ``url`` as a downloader would (following the CDN's own redirects) and hash the body,
    one block held at a time. Network failures raise ``aiohttp.ClientError``/``TimeoutError``."""
    async with session.get(url, timeout=TIMEOUT, allow_redirects=True) as response:
        if response.status != 200:
            return PublicRead(response.status, None)
        digest = hashlib.sha256()
        size = 0
        async for block in response.content.iter_chunked(READ_BLOCK):
            digest.update(block)
            size += len(block)
        return PublicRead(200, size, digest.hexdigest(), response.headers.get("ETag"))


async def head(session: aiohttp.ClientSession, url: str) -> PublicRead:
    """HEAD ``url`` anonymously: its status and announced Content-Length."""
    async with session.head(url, timeout=HEAD_TIMEOUT, allow_redirects=True) as response:
        length = response.headers.get("Content-Length")
        size = int(length) if length is not None and length.isdigit() else None
        return PublicRead(response.status, size, None, response.headers.get("ETag"))
