"""The S3 mirror: copies a published archive (and its ``.sha256``) from PostgreSQL into the
bucket, trusts the copy only after reading it back, and re-checks copies later (scrubbing; the
periodic HEAD and content checks are ``mirror_checks``).

PostgreSQL stays the source of truth: nothing here can change what is published, and a failure
only leaves the archive without a verified copy (downloads are then served from PostgreSQL).
docs/operators/running.md ("S3 mirror") is the operator's view of the same."""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Literal

import aiohttp

from gomoku_archive.db import mirror_store
from gomoku_archive.db.archive_store import ArchiveRow
from gomoku_archive.db.pool import Pool
from gomoku_archive.errors import MirrorFailed
from gomoku_archive.http.headers import (
    CHECKSUM_CONTENT_TYPE,
    IMMUTABLE_CACHE_CONTROL,
    attachment,
    file_content_type,
)
from gomoku_archive.logs import get_logger
from gomoku_archive.profile.names import CHECKSUM_SUFFIX, checksum_line
from gomoku_archive.storage import public_copy
from gomoku_archive.storage.chunks import ChunkReadError, iter_archive
from gomoku_archive.storage.mirror_checks import TargetCheck, TargetChecker
from gomoku_archive.storage.s3 import ObjectHeaders, ReadBack, S3Store

log = get_logger(__name__)

S3_MAX_PARTS = 10_000

MirrorAction = Literal["uploaded", "present", "verified", "repaired", "skipped"]
"""- ``uploaded``: the copy was sent and read back;
- ``present``: a matching copy was in the bucket already (nothing sent; behind a CDN, its CDN
  address was read anonymously again);
- ``verified``: a scrub read the copy back and it still matches;
- ``repaired``: a scrub found the copy wrong or gone and replaced it;
- ``skipped``: nothing to do (verified already, not a served file, or another process has it).
"""


@dataclass(frozen=True, slots=True)
class MirrorResult:
    archive_id: int
    file_name: str | None
    action: MirrorAction
    key: str | None = None
    uploaded_bytes: int = 0
    seconds: float = 0.0
    reason: str | None = None

    def summary(self) -> dict[str, object]:
        """The job's result and log fields."""
        return {
            "archive_id": self.archive_id,
            "file": self.file_name,
            "outcome": self.action,
            "key": self.key,
            "uploaded_bytes": self.uploaded_bytes,
            "seconds": round(self.seconds, 3),
            **({"reason": self.reason} if self.reason else {}),
        }


@dataclass(slots=True)
class MirrorReport:
    """What a pass over many archives (backfill or scrub) did."""

    results: list[MirrorResult] = field(default_factory=list)
    failures: dict[int, str] = field(default_factory=dict)

    def count(self, *actions: MirrorAction) -> int:
        return sum(1 for r in self.results if r.action in actions)

    def summary(self) -> dict[str, object]:
        return {
            "checked": len(self.results) + len(self.failures),
            "uploaded": self.count("uploaded"),
            "present": self.count("present"),
            "fine": self.count("verified"),
            "repaired": self.count("repaired"),
            "skipped": self.count("skipped"),
            "failed": len(self.failures),
            "uploaded_bytes": sum(r.uploaded_bytes for r in self.results),
            "errors": {str(k): v for k, v in self.failures.items()},
        }


def archive_headers(file_name: str) -> ObjectHeaders:
    return ObjectHeaders(
        file_content_type(file_name), attachment(file_name), IMMUTABLE_CACHE_CONTROL
    )


def checksum_headers(file_name: str) -> ObjectHeaders:
    name = file_name + CHECKSUM_SUFFIX
    return ObjectHeaders(CHECKSUM_CONTENT_TYPE, attachment(name), IMMUTABLE_CACHE_CONTROL)


async def cut_parts(views: AsyncIterable[memoryview], part_size: int) -> AsyncIterator[bytes]:
    """``views`` regrouped into parts of exactly ``part_size`` bytes, the last one shorter.
    The views are joined once per part, so each byte is copied once."""
    held: list[memoryview] = []
    size = 0
    async for whole in views:
        view = whole
        while size + len(view) >= part_size:
            cut = part_size - size
            held.append(view[:cut])
            part = b"".join(held)
            held.clear()
            size = 0
            view = view[cut:]
            yield part
        if view:
            held.append(view)
            size += len(view)
    if held:
        yield b"".join(held)


class ArchiveMirror:
    """Mirror operations on one bucket; safe to run from several processes and tasks at once
    (one archive is handled by one process at a time, under a PostgreSQL advisory lock)."""

    def __init__(self, pool: Pool, store: S3Store) -> None:
        self.pool = pool
        self.store = store

    async def mirror(self, archive_id: int) -> MirrorResult:
        """Make sure the archive has a verified copy in the bucket (idempotent)."""
        return await self._locked(archive_id, _Attempt.mirror)

    async def verify(self, archive_id: int) -> MirrorResult:
        """Read the archive's copy back; replace it if it no longer matches (scrub one)."""
        return await self._locked(archive_id, _Attempt.verify)

    async def backfill(self) -> MirrorReport:
        """Mirror every served file without a verified copy in this bucket, oldest first."""
        async with self.pool.acquire() as conn:
            ids = await mirror_store.archives_to_mirror(
                conn, self.store.identity, self.store.bucket, self.store.prefix
            )
        return await self._each(ids, self.mirror)

    async def scrub(self) -> MirrorReport:
        """Re-read every verified copy in this bucket, repairing the ones that changed."""
        async with self.pool.acquire() as conn:
            ids = await mirror_store.mirrored_archives(conn, self.store.bucket)
        return await self._each(ids, self.verify)

    async def check_targets(
        self, *, wait_seconds: float, into: TargetCheck | None = None
    ) -> TargetCheck:
        """The HEAD pass over every redirect target (``mirror_checks``)."""
        return await TargetChecker(self.pool, self.store).head_pass(
            wait_seconds=wait_seconds, into=into
        )

    async def check_content(
        self, *, sample_bytes: int, wait_seconds: float, into: TargetCheck | None = None
    ) -> TargetCheck:
        """The content pass over every redirect target (``mirror_checks``)."""
        return await TargetChecker(self.pool, self.store).content_pass(
            sample_bytes=sample_bytes, wait_seconds=wait_seconds, into=into
        )

    async def _each(
        self, ids: list[int], action: Callable[[int], Awaitable[MirrorResult]]
    ) -> MirrorReport:
        report = MirrorReport()
        for archive_id in ids:
            try:
                report.results.append(await action(archive_id))
            except MirrorFailed as exc:
                report.failures[archive_id] = str(exc)
        return report

    async def _locked(
        self, archive_id: int, action: Callable[[_Attempt], Awaitable[MirrorAction]]
    ) -> MirrorResult:
        started = time.monotonic()
        async with self.pool.acquire() as lock_conn:
            row = await mirror_store.servable_archive(lock_conn, archive_id)
            if row is None or row.file_name is None:
                reason = "not a published or superseded archive with a file"
                return MirrorResult(archive_id, None, "skipped", reason=reason)
            if not await mirror_store.try_lock_archive(lock_conn, archive_id):
                reason = "another process is mirroring this archive"
                return MirrorResult(archive_id, row.file_name, "skipped", reason=reason)
            attempt = _Attempt(self.pool, self.store, row)
            try:
                done = await action(attempt)
            except BaseException as exc:
                error = (
                    str(exc) if isinstance(exc, MirrorFailed) else f"{type(exc).__name__}: {exc}"
                )
                await asyncio.shield(attempt.record_failure(error))
                if isinstance(exc, Exception) and not isinstance(exc, MirrorFailed):
                    message = f"mirror of {row.file_name} failed: {error}"
                    raise MirrorFailed(message, transient=False) from exc
                raise
            finally:
                if not lock_conn.is_closed():
                    await mirror_store.unlock_archive(lock_conn, archive_id)
        note = "a verified copy is in the bucket already" if done == "skipped" else None
        seconds = time.monotonic() - started
        return MirrorResult(
            archive_id, row.file_name, done, attempt.key, attempt.sent, seconds, note
        )


class _Attempt:
    """One archive's mirror or verify run: what it read, sent and found."""

    def __init__(self, pool: Pool, store: S3Store, row: ArchiveRow) -> None:
        assert row.file_name is not None
        assert row.sha256 is not None
        self.pool = pool
        self.store = store
        self.row = row
        self.file_name: str = row.file_name
        self.sha256: str = row.sha256
        self.key = store.key_for(row.file_name)
        self.checksum_key = self.key + CHECKSUM_SUFFIX
        self.checksum_body = checksum_line(row.file_name, row.sha256).encode("ascii")
        self.sent = 0

    async def mirror(self) -> MirrorAction:
        store, bucket = self.store.identity, self.store.bucket
        if self.row.mirror.verified_in(store, bucket, self.key):
            cdn_url = self.store.cdn_url(self.key)
            if not self.row.mirror.not_redirected_because(store, bucket, self.key, cdn_url):
                return "skipped"
            await self.check_cdn()  # verified in the bucket; the CDN's copy is what is left
            return "present"
        return await self.ensure_copy(known_wrong=False)

    async def verify(self) -> MirrorAction:
        read = await self.store.read_back(self.key)
        problem = self.archive_problem(read)
        if problem is None:
            problem = await self.checksum_problem()
        if problem is None and read is not None:
            await self.record_verified(read.etag)
            await self.check_cdn()
            return "verified"
        log.warning("mirror_copy_wrong", archive_id=self.row.id, key=self.key, problem=problem)
        async with self.pool.acquire() as conn:
            error = f"the copy in the bucket is wrong: {problem}"
            await mirror_store.record_mismatch(conn, self.row.id, error)
        await self.ensure_copy(known_wrong=True)
        return "repaired"

    async def ensure_copy(self, *, known_wrong: bool) -> MirrorAction:
        """Upload whatever is missing or wrong, read it back, and only then trust it."""
        aborted = await self.store.abort_incomplete(self.key)
        if aborted:
            log.info("mirror_incomplete_uploads_aborted", key=self.key, uploads=aborted)
        read = None
        if not known_wrong:
            # An object of the right size may be a complete earlier copy: read it rather than
            # send it again.
            found = await self.store.head(self.key)
            if found is not None and found.size == self.row.bytes:
                read = await self.store.read_back(self.key)
        if read is None or self.archive_problem(read) is not None:
            await self.upload_archive()
            read = await self.store.read_back(self.key)
            problem = self.archive_problem(read)
            if problem is not None:
                where = self.store.where(self.key)
                raise MirrorFailed(
                    f"{where} does not match after upload: {problem}", transient=True
                )
        assert read is not None
        if known_wrong or await self.checksum_problem() is not None:
            headers = checksum_headers(self.file_name)
            await self.store.put_small(self.checksum_key, self.checksum_body, headers)
            self.sent += len(self.checksum_body)
            problem = await self.checksum_problem()
            if problem is not None:
                where = self.store.where(self.checksum_key)
                raise MirrorFailed(
                    f"{where} does not match after upload: {problem}", transient=True
                )
        await self.record_verified(read.etag)
        await self.check_cdn()
        return "uploaded" if self.sent else "present"

    async def check_cdn(self) -> None:
        """Behind a CDN: read the archive and its ``.sha256`` anonymously from the exact
        addresses a redirect gives clients; only when both are right does the copy become a
        redirect target. A failure is recorded (downloads stay local) and raised as
        transient, so the job tries again later."""
        url = self.store.cdn_url(self.key)
        checksum_url = self.store.cdn_url(self.checksum_key)
        if url is None or checksum_url is None:
            return
        expected_checksum = hashlib.sha256(self.checksum_body).hexdigest()
        problem: str | None
        try:
            async with public_copy.new_session() as session:
                got = await public_copy.read(session, url)
                problem = got.problem(self.row.bytes, self.sha256)
                if problem is None:
                    got = await public_copy.read(session, checksum_url)
                    problem = got.problem(len(self.checksum_body), expected_checksum)
                    if problem is not None:
                        problem = f"{checksum_url} {problem}"
                else:
                    problem = f"{url} {problem}"
        except (aiohttp.ClientError, TimeoutError) as exc:
            problem = f"cannot read {url}: {type(exc).__name__}: {exc}".rstrip(": ")
        async with self.pool.acquire() as conn:
            await mirror_store.record_cdn(conn, self.row.id, url, problem)
        if problem is not None:
            log.warning("mirror_cdn_unverified", archive_id=self.row.id, problem=problem)
            raise MirrorFailed(
                "the copy is verified in the bucket, but not through the CDN (downloads are "
                f"served by the API meanwhile): {problem}",
                transient=True,
            )
        log.info("mirror_cdn_verified", archive_id=self.row.id)

    def archive_problem(self, read: ReadBack | None) -> str | None:
        """None when ``read`` is exactly the archive's bytes; else why not."""
        if read is None:
            return "no such object"
        if read.size != self.row.bytes or read.sha256 != self.sha256:
            return (
                f"read back {read.size} bytes with sha256 {read.sha256}, "
                f"expected {self.row.bytes} bytes with sha256 {self.sha256}"
            )
        return None

    async def checksum_problem(self) -> str | None:
        read = await self.store.read_back(self.checksum_key)
        if read is None:
            return "no checksum object"
        expected = hashlib.sha256(self.checksum_body).hexdigest()
        if read.size != len(self.checksum_body) or read.sha256 != expected:
            return "the checksum object's bytes differ from the archive's checksum line"
        return None

    async def upload_archive(self) -> None:
        part_size = self.store.part_size
        if self.row.bytes > part_size * S3_MAX_PARTS:
            raise MirrorFailed(
                f"{self.file_name} has {self.row.bytes} bytes, more than {S3_MAX_PARTS} parts "
                f"of S3_PART_SIZE={part_size}; raise S3_PART_SIZE",
                transient=False,
            )
        headers = archive_headers(self.file_name)
        try:
            if self.row.bytes <= part_size:
                views = iter_archive(self.pool, self.row.id, self.row.bytes)
                body = b"".join([bytes(p) async for p in views])
                await self.store.put_small(self.key, body, headers)
                self.sent += len(body)
            else:
                await self.store.put_multipart(self.key, self.parts(), headers)
        except ChunkReadError as exc:
            raise MirrorFailed(
                f"cannot read {self.file_name} from PostgreSQL: {exc}", transient=exc.database
            ) from exc

    async def parts(self) -> AsyncIterator[bytes]:
        """The archive in parts, read from the chunks as they are needed: one part is read
        while the previous one uploads."""
        views = iter_archive(self.pool, self.row.id, self.row.bytes)
        async for part in cut_parts(views, self.store.part_size):
            self.sent += len(part)
            yield part

    async def record_verified(self, etag: str) -> None:
        async with self.pool.acquire() as conn:
            await mirror_store.record_verified(
                conn,
                self.row.id,
                store=self.store.identity,
                bucket=self.store.bucket,
                key=self.key,
                etag=etag,
                uploaded_bytes=self.sent,
            )

    async def record_failure(self, error: str) -> None:
        try:
            async with self.pool.acquire() as conn:
                await mirror_store.record_failure(conn, self.row.id, error)
                await mirror_store.add_uploaded_bytes(conn, self.row.id, self.sent)
        except Exception as exc:  # the database is what failed; the job's error still tells
            log.warning("mirror_failure_not_recorded", archive_id=self.row.id, error=str(exc))
