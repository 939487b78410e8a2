"""A copy as a downloader reaches it: an anonymous GET or HEAD of the exact address a redirect
sends clients to (a CDN URL), without credentials, cookies or redirects of our own. The mirror
trusts a CDN address only after ``read`` returned the archive's length and SHA-256; the
periodic checks ``head`` it, and ``read_range`` a window of its bytes."""

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
    wrong: str | None = None
    """What was wrong with the answer itself (a 206 of another range than the one asked)."""
    received: int = 0
    """Body bytes read off the network (more than ``size`` when a range was answered 200)."""

    def problem(self, size: int, sha256: str | None, *, ranged: bool = False) -> str | None:
        """None when this is ``size`` bytes (with SHA-256 ``sha256``, when given); else why not.
        ``ranged``: the answer to ``read_range``, where 206 is the right status too."""
        if self.status != 200 and not (ranged and self.status == 206):
            return f"answered HTTP {self.status}"
        if self.wrong is not None:
            return self.wrong
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
        etag = response.headers.get("ETag")
        return PublicRead(200, size, digest.hexdigest(), etag, received=size)


async def read_range(session: aiohttp.ClientSession, url: str, start: int, end: int) -> PublicRead:
    """GET bytes ``[start, end)`` of ``url`` anonymously, as a resuming downloader would, and hash
    them. A 206 must be exactly that range (its ``Content-Range`` says so); a CDN that ignores
    ``Range`` answers 200 with the whole file, of which the window is hashed (the bytes before
    it are read too, and the rest not at all)."""
    headers = {"Range": f"bytes={start}-{end - 1}"}
    async with session.get(url, headers=headers, timeout=TIMEOUT, allow_redirects=True) as got:
        if got.status == 206:
            answered = got.headers.get("Content-Range", "")
            if not answered.startswith(f"bytes {start}-{end - 1}/"):
                wrong = f"answered Content-Range {answered!r} to Range bytes={start}-{end - 1}"
                return PublicRead(206, None, wrong=wrong)
            skip = 0
        elif got.status == 200:
            skip = start
        else:
            return PublicRead(got.status, None)
        digest = hashlib.sha256()
        size = received = 0
        wanted = end - start
        async for block in got.content.iter_chunked(READ_BLOCK):
            received += len(block)
            if skip:
                dropped = min(skip, len(block))
                block = block[dropped:]
                skip -= dropped
            block = block[: wanted - size]
            digest.update(block)
            size += len(block)
            if size >= wanted:
                break
        etag = got.headers.get("ETag")
        return PublicRead(got.status, size, digest.hexdigest(), etag, received=received)


async def head(session: aiohttp.ClientSession, url: str) -> PublicRead:
    """HEAD ``url`` anonymously: its status and announced Content-Length."""
    async with session.head(url, timeout=HEAD_TIMEOUT, allow_redirects=True) as response:
        length = response.headers.get("Content-Length")
        size = int(length) if length is not None and length.isdigit() else None
        return PublicRead(response.status, size, None, response.headers.get("ETag"))
