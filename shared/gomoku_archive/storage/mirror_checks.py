"""The periodic checks of every redirect target (a verified copy the API sends downloads to):

- the HEAD pass (``check_mirror``, every ``MIRROR_CHECK_SECONDS``): size and ETag of the object
  and of its ``.sha256`` in the bucket, and behind a CDN the status and length at the CDN
  address; no byte is read;
- the content pass (``check_mirror_content``, every ``MIRROR_CONTENT_CHECK_SECONDS``): a window
  of the file's bytes (``jobs.content_sample``), read from the bucket and, behind a CDN, from
  its CDN address as a downloader would, compared with the same bytes read from PostgreSQL;
  and the ``.sha256`` whole. It finds what HEAD cannot see: wrong bytes of the right length.

Either pass withdraws a wrong copy at once (the API stops redirecting to it with the next
request) and names it for a repair job; a store that does not answer leaves the copy as it was.

Every copy is looked at under its mirror lock, which mirror jobs, the scrub and the other pass
take too. A pass never skips a copy because someone holds it right now: it checks the others
first, then waits for the held ones, each until the pass has run for its wait (the job gives
half its period) and a second at least. A copy still held then, one the store did not answer for,
and the copies a cancelled pass had not reached are each logged at warning
(``mirror_copy_unchecked``, with the reason) and make the pass's outcome ``incomplete``.
docs/operators/running.md ("Checking the copies") is the operator's view, with the cost."""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Literal

import aiohttp

from gomoku_archive.db import content_store, mirror_store
from gomoku_archive.db.archive_store import ArchiveRow
from gomoku_archive.db.pool import Connection, Pool
from gomoku_archive.errors import MirrorFailed
from gomoku_archive.jobs.content_sample import Window, offset_after, window_at
from gomoku_archive.logs import get_logger
from gomoku_archive.profile.names import CHECKSUM_SUFFIX, checksum_line
from gomoku_archive.storage import public_copy
from gomoku_archive.storage.chunks import ChunkReadError, iter_archive
from gomoku_archive.storage.s3 import S3Store

log = get_logger(__name__)

HEAD_CHECKS_AT_ONCE = 8
CONTENT_CHECKS_AT_ONCE = 2
"""Files whose windows are read at once: each holds one block (1 MiB) at a time."""
MIN_LOCK_WAIT_SECONDS = 1.0
"""The least a pass waits for a held copy, however long its other copies took."""

CheckKind = Literal["head", "content"]
UncheckedCause = Literal["busy", "store", "database", "cancelled"]
"""Why a copy was not checked: its lock stayed held, the store did not answer, PostgreSQL could
not give its bytes, or the pass was cancelled (arq's timeout, a worker's shutdown)."""


@dataclass(slots=True)
class TargetCheck:
    """What one pass over every redirect target found."""

    checked: int = 0
    """Copies given a verdict: fine, withdrawn or waiting for their CDN read."""
    fine: list[int] = field(default_factory=list)
    withdrawn: dict[int, str] = field(default_factory=dict)
    """Copies found missing or wrong (or whose CDN address failed): no longer redirected."""
    cdn_pending: list[int] = field(default_factory=list)
    """Copies verified in the bucket whose CDN address has not passed an anonymous read."""
    failures: dict[int, str] = field(default_factory=dict)
    """Copies the check could not look at (the store did not answer): left as they were."""
    skipped: dict[int, str] = field(default_factory=dict)
    """Copies whose mirror lock stayed held (an upload, a scrub) for all the pass could wait."""
    unfinished: list[int] = field(default_factory=list)
    """Copies a cancelled pass had not finished."""
    store_bytes: int = 0
    """Bytes the content pass read from the bucket (HEAD reads none)."""
    cdn_bytes: int = 0
    database_bytes: int = 0

    @property
    def outcome(self) -> str:
        """``checked`` when every redirect target got a verdict, else ``incomplete``."""
        return "incomplete" if self.failures or self.skipped or self.unfinished else "checked"

    def to_repair(self) -> list[int]:
        """The archives a mirror job should see to: withdrawn, and waiting for the CDN."""
        return sorted({*self.withdrawn, *self.cdn_pending})

    def summary(self) -> dict[str, object]:
        return {
            "checked": self.checked,
            "fine": len(self.fine),
            "withdrawn": len(self.withdrawn),
            "cdnPending": len(self.cdn_pending),
            "failed": len(self.failures),
            "skipped": len(self.skipped),
            "unfinished": len(self.unfinished),
            "problems": {
                str(k): v for k, v in {**self.withdrawn, **self.failures, **self.skipped}.items()
            },
            "bytesRead": {
                "store": self.store_bytes,
                "cdn": self.cdn_bytes,
                "database": self.database_bytes,
            },
        }


_Check = Callable[
    [ArchiveRow, str, "aiohttp.ClientSession | None", Connection], Awaitable["_Found"]
]
"""One copy's check: its row, key, the CDN session and the connection that holds its lock."""


@dataclass(frozen=True, slots=True)
class _Found:
    """One copy's verdict: fine, wrong in the bucket, wrong at the CDN, or not CDN-verified;
    for the content pass, the window it read."""

    bucket_problem: str | None = None
    cdn_problem: str | None = None
    cdn_url: str | None = None
    cdn_pending: bool = False
    window: Window | None = None


class TargetChecker:
    """The two passes over one bucket's redirect targets. ``wait_seconds``: how long from its
    start a pass may wait for copies that others hold (at least ``MIN_LOCK_WAIT_SECONDS`` for
    each); ``into``: the check to fill, which keeps what a cancelled pass had found."""

    def __init__(self, pool: Pool, store: S3Store) -> None:
        self.pool = pool
        self.store = store

    async def head_pass(
        self, *, wait_seconds: float, into: TargetCheck | None = None
    ) -> TargetCheck:
        """HEAD every redirect target (and its ``.sha256``; behind a CDN, its CDN address,
        anonymously). Cheap: no byte is read."""
        result = into if into is not None else TargetCheck()
        await self._each(
            self._head, at_once=HEAD_CHECKS_AT_ONCE, kind="head", wait=wait_seconds, result=result
        )
        async with self.pool.acquire() as conn:
            await mirror_store.record_head_checked(conn, result.fine)
        return result

    async def content_pass(
        self, *, sample_bytes: int, wait_seconds: float, into: TargetCheck | None = None
    ) -> TargetCheck:
        """Read the next window (of ``sample_bytes``; 0: the whole file) of every redirect
        target from the bucket and its CDN address and compare it with PostgreSQL's; a window
        found right moves the copy's place on (``jobs.content_sample``)."""
        result = into if into is not None else TargetCheck()

        async def check(
            row: ArchiveRow, key: str, session: aiohttp.ClientSession | None, conn: Connection
        ) -> _Found:
            # Read under the copy's lock: a pass running beside this one waits for it, then
            # reads the window after.
            offset = await content_store.content_offset(conn, row.id)
            window = window_at(row.bytes, sample_bytes, offset)
            found = await self._content(row, key, session, window, result)
            return dataclasses.replace(found, window=window)

        await self._each(
            check, at_once=CONTENT_CHECKS_AT_ONCE, kind="content", wait=wait_seconds, result=result
        )
        return result

    # --- one pass ---------------------------------------------------------------------------

    async def _each(
        self, check: _Check, *, at_once: int, kind: CheckKind, wait: float, result: TargetCheck
    ) -> None:
        """Every target whose lock is free at once, then the held ones, each waited for until
        ``wait`` seconds after the start (``MIN_LOCK_WAIT_SECONDS`` at least)."""
        until = time.monotonic() + wait
        async with self.pool.acquire() as conn:
            rows = await mirror_store.redirect_candidates(
                conn, self.store.identity, self.store.bucket
            )
        slots = asyncio.Semaphore(at_once)
        session = public_copy.new_session() if self.store.behind_cdn else None
        left = {row.id: row for row in rows}
        held: list[ArchiveRow] = []

        async def one(row: ArchiveRow, *, waiting: bool) -> None:
            async with slots:
                seconds = max(until - time.monotonic(), MIN_LOCK_WAIT_SECONDS) if waiting else None
                if await self._locked(row, check, session, result, kind, seconds):
                    left.pop(row.id, None)
                elif waiting:
                    reason = (
                        f"its mirror lock stayed held for the {seconds:.1f} s the pass waited "
                        "(an upload, a scrub or a long check has it)"
                    )
                    result.skipped[row.id] = reason
                    _unchecked(kind, row, "busy", reason)
                    left.pop(row.id, None)
                else:
                    held.append(row)

        try:
            await asyncio.gather(*(one(row, waiting=False) for row in rows))
            await asyncio.gather(*(one(row, waiting=True) for row in held))
        except asyncio.CancelledError:
            for row in left.values():
                result.unfinished.append(row.id)
                _unchecked(kind, row, "cancelled", "the pass was cancelled before it was checked")
            raise
        finally:
            if session is not None:
                await session.close()

    async def _locked(
        self,
        row: ArchiveRow,
        check: _Check,
        session: aiohttp.ClientSession | None,
        result: TargetCheck,
        kind: CheckKind,
        wait_seconds: float | None,
    ) -> bool:
        """Check the copy under its mirror lock, taken at once (``wait_seconds`` None) or
        within ``wait_seconds``; False when the lock was not had, and nothing was done."""
        assert row.file_name is not None
        key = self.store.key_for(row.file_name)
        if row.mirror.key != key:
            return True  # mirrored under another prefix: the backfill sees to it
        async with self.pool.acquire() as lock_conn:
            locked = (
                await mirror_store.try_lock_archive(lock_conn, row.id)
                if wait_seconds is None
                else await mirror_store.lock_archive_within(lock_conn, row.id, wait_seconds)
            )
            if not locked:
                return False
            try:
                try:
                    found = await check(row, key, session, lock_conn)
                except MirrorFailed as exc:
                    result.failures[row.id] = str(exc)
                    _unchecked(kind, row, "store", str(exc))
                    return True
                except ChunkReadError as exc:
                    problem = f"cannot read {row.file_name} from PostgreSQL: {exc}"
                    result.failures[row.id] = problem
                    _unchecked(kind, row, "database", problem)
                    return True
                result.checked += 1
                await self._record(lock_conn, row, key, found, result, kind)
            finally:
                if not lock_conn.is_closed():
                    await mirror_store.unlock_archive(lock_conn, row.id)
        return True

    async def _record(
        self,
        conn: Connection,
        row: ArchiveRow,
        key: str,
        found: _Found,
        result: TargetCheck,
        kind: CheckKind,
    ) -> None:
        if found.window is not None and (found.bucket_problem or found.cdn_problem):
            await content_store.restart_content_cycle(conn, row.id)
        if found.bucket_problem is not None:
            error = f"the periodic {kind} check found the copy wrong: {found.bucket_problem}"
            log.warning(
                "mirror_target_withdrawn",
                archive_id=row.id,
                key=key,
                check=kind,
                problem=found.bucket_problem,
            )
            await mirror_store.record_mismatch(conn, row.id, error)
            result.withdrawn[row.id] = error
        elif found.cdn_problem is not None:
            assert found.cdn_url is not None
            log.warning(
                "mirror_cdn_withdrawn", archive_id=row.id, check=kind, problem=found.cdn_problem
            )
            await mirror_store.record_cdn(conn, row.id, found.cdn_url, found.cdn_problem)
            result.withdrawn[row.id] = found.cdn_problem
        elif found.cdn_pending:
            result.cdn_pending.append(row.id)
        else:
            result.fine.append(row.id)
            if found.window is not None:
                await content_store.record_window_right(
                    conn,
                    row.id,
                    first=found.window.first,
                    last=found.window.last,
                    next_offset=offset_after(found.window),
                )

    def _cdn_target(self, row: ArchiveRow, key: str) -> tuple[str | None, bool]:
        """The CDN address to check (None without a CDN), and whether the copy still waits for
        its first anonymous read there (then nothing is checked at the CDN)."""
        cdn_url = self.store.cdn_url(key)
        if cdn_url is None:
            return None, False
        return cdn_url, row.mirror.not_redirected_because(
            self.store.identity, self.store.bucket, key, cdn_url
        ) is not None

    # --- HEAD -------------------------------------------------------------------------------

    async def _head(
        self, row: ArchiveRow, key: str, session: aiohttp.ClientSession | None, _: Connection
    ) -> _Found:
        problem = await self._head_problem(row, key)
        if problem is not None:
            return _Found(bucket_problem=problem)
        cdn_url, pending = self._cdn_target(row, key)
        if cdn_url is None or session is None:
            return _Found()
        if pending:
            return _Found(cdn_pending=True)
        return _Found(
            cdn_problem=await _cdn_head_problem(session, cdn_url, row.bytes), cdn_url=cdn_url
        )

    async def _head_problem(self, row: ArchiveRow, key: str) -> str | None:
        assert row.file_name is not None
        assert row.sha256 is not None
        found = await self.store.head(key)
        if found is None:
            return "the object is gone"
        if found.size != row.bytes:
            return f"the object has {found.size} bytes, expected {row.bytes}"
        if row.mirror.etag is not None and found.etag != row.mirror.etag:
            return f"the object's ETag changed from {row.mirror.etag} to {found.etag}"
        checksum = await self.store.head(key + CHECKSUM_SUFFIX)
        expected = len(checksum_line(row.file_name, row.sha256).encode("ascii"))
        if checksum is None:
            return "the checksum object is gone"
        if checksum.size != expected:
            return f"the checksum object has {checksum.size} bytes, expected {expected}"
        return None

    # --- content ----------------------------------------------------------------------------

    async def _content(
        self,
        row: ArchiveRow,
        key: str,
        session: aiohttp.ClientSession | None,
        window: Window,
        result: TargetCheck,
    ) -> _Found:
        assert row.file_name is not None
        assert row.sha256 is not None
        expected = row.sha256 if window.whole else await self._database_window(row, window, result)
        where = "the whole file" if window.whole else f"bytes {window.start}-{window.end - 1}"
        read = (
            await self.store.read_back(key)
            if window.whole
            else await self.store.read_range(key, window.start, window.end)
        )
        if read is None:
            return _Found(bucket_problem="the object is gone")
        result.store_bytes += read.size
        if read.size != window.length or read.sha256 != expected:
            return _Found(
                bucket_problem=f"{where}: read {read.size} bytes with sha256 {read.sha256}, "
                f"expected {window.length} bytes with sha256 {expected}"
            )
        checksum_body = checksum_line(row.file_name, row.sha256).encode("ascii")
        checksum_sha256 = hashlib.sha256(checksum_body).hexdigest()
        checksum = await self.store.read_back(key + CHECKSUM_SUFFIX)
        if checksum is None:
            return _Found(bucket_problem="the checksum object is gone")
        result.store_bytes += checksum.size
        if checksum.sha256 != checksum_sha256:
            return _Found(
                bucket_problem="the checksum object's bytes differ from the checksum line"
            )
        cdn_url, pending = self._cdn_target(row, key)
        if cdn_url is None or session is None:
            return _Found()
        if pending:
            return _Found(cdn_pending=True)
        problem = await _cdn_content_problem(session, cdn_url, window, expected, result)
        if problem is None:
            checksum_url = self.store.cdn_url(key + CHECKSUM_SUFFIX)
            assert checksum_url is not None
            whole = Window(0, len(checksum_body), len(checksum_body))
            problem = await _cdn_content_problem(
                session, checksum_url, whole, checksum_sha256, result
            )
        return _Found(cdn_problem=problem, cdn_url=cdn_url)

    async def _database_window(self, row: ArchiveRow, window: Window, result: TargetCheck) -> str:
        """The SHA-256 of the window's bytes as PostgreSQL holds them: the truth."""
        digest = hashlib.sha256()
        async for view in iter_archive(
            self.pool, row.id, row.bytes, start=window.start, end=window.end
        ):
            digest.update(view)
            result.database_bytes += len(view)
        return digest.hexdigest()


def _unchecked(kind: CheckKind, row: ArchiveRow, cause: UncheckedCause, reason: str) -> None:
    log.warning(
        "mirror_copy_unchecked",
        check=kind,
        archive_id=row.id,
        file=row.file_name,
        cause=cause,
        reason=reason,
    )


async def _cdn_head_problem(session: aiohttp.ClientSession, url: str, size: int) -> str | None:
    try:
        got = await public_copy.head(session, url)
    except (aiohttp.ClientError, TimeoutError) as exc:
        return f"HEAD {url} failed: {type(exc).__name__}: {exc}".rstrip(": ")
    problem = got.problem(size, None)
    return None if problem is None else f"HEAD {url} {problem}"


async def _cdn_content_problem(
    session: aiohttp.ClientSession, url: str, window: Window, sha256: str, result: TargetCheck
) -> str | None:
    """A window of ``url`` read anonymously (the whole file without a Range header)."""
    try:
        if window.whole:
            got = await public_copy.read(session, url)
        else:
            got = await public_copy.read_range(session, url, window.start, window.end)
    except (aiohttp.ClientError, TimeoutError) as exc:
        return f"GET {url} failed: {type(exc).__name__}: {exc}".rstrip(": ")
    result.cdn_bytes += got.received
    problem = got.problem(window.length, sha256, ranged=not window.whole)
    if problem is None:
        return None
    where = "" if window.whole else f" (Range {window.http_range()})"
    return f"GET {url}{where} {problem}"
