"""The S3 edge: every boto3 call the mirror makes, run in a small thread pool of its own so the
event loop never blocks (boto3 is synchronous), and every botocore failure turned into a
``MirrorFailed`` that says whether trying again later may help.

Region and credentials come from boto3's standard chain (environment, shared files, web
identity, the container endpoint, instance role), each network fetch of them bounded
(``storage.s3_session``); this module never logs or stores them."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from typing import Any, TypeVar
from urllib.parse import quote, urlsplit

import botocore.exceptions
from botocore.config import Config

from gomoku_archive.errors import ConfigError, MirrorFailed, StoreUnavailable
from gomoku_archive.logs import get_logger
from gomoku_archive.settings import Settings
from gomoku_archive.storage.s3_session import Signer, bounded_session

log = get_logger(__name__)

T = TypeVar("T")

BUCKET_CHECK_TRIES = 3
"""Start-up tries of a store that does not answer, ``BUCKET_CHECK_PAUSE_SECONDS`` apart (each
is boto3's own three attempts): a store restarting beside the worker is waited for."""
BUCKET_CHECK_PAUSE_SECONDS = 2.0

THREADS = 4
"""boto3 calls in flight at once: an upload part, the next part's read-ahead, a read-back."""
READ_BLOCK = 1024 * 1024
"""Bytes per read when an object is read back: the read-back holds at most this much."""

PRESIGN_TIMEOUT_SECONDS = 2.0
"""How long a download waits for its presigned URL before the API serves the file itself:
signing is local and takes microseconds once credentials are cached; only a credential fetch
(at start, and when they near expiry) takes longer, bounded by the values above."""
SIGNER_START_SECONDS = 10.0
"""How long the API's start waits for its signing client (``S3Store.prepare_signing``)."""
SIGNING_ERROR_CHARS = 300

# S3 error codes worth another try soon; every other client error is the store saying no
# (wrong credentials, no such bucket, access denied), which a retry only repeats.
_TRANSIENT_CODES = frozenset(
    {"InternalError", "ServiceUnavailable", "SlowDown", "RequestTimeout", "RequestTimeTooSkewed"}
)
_UNSUPPORTED_CODES = frozenset({"NotImplemented", "NotImplementedError", "MethodNotAllowed"})
"""What an S3-compatible store answers for a feature it lacks (s3rver, some gateways)."""
_CHECKSUM_REFUSALS = frozenset({"NotImplemented", "InvalidArgument", "InvalidRequest"})
_NETWORK_ERRORS: tuple[type[BaseException], ...] = (
    botocore.exceptions.EndpointConnectionError,
    botocore.exceptions.ConnectionClosedError,
    botocore.exceptions.ConnectTimeoutError,
    botocore.exceptions.ReadTimeoutError,
    botocore.exceptions.ResponseStreamingError,
    botocore.exceptions.IncompleteReadError,
    ConnectionError,
    TimeoutError,
)


@dataclass(frozen=True, slots=True)
class ObjectHeaders:
    """What goes with an object: the same headers the API sends for the file."""

    content_type: str
    content_disposition: str
    cache_control: str


@dataclass(frozen=True, slots=True)
class StoredObject:
    key: str
    size: int
    etag: str


@dataclass(frozen=True, slots=True)
class ReadBack:
    """An object's bytes as the store returned them: SHA-256 and length, never the bytes."""

    sha256: str
    size: int
    etag: str


def store_identity(endpoint_url: str | None) -> str:
    """Which S3 service a bucket lives in, as recorded with each verified copy: the endpoint
    the service reaches (``S3_ENDPOINT_URL``, scheme and host lower-cased, a default port and
    a trailing slash dropped), or ``aws`` for AWS S3 itself, where bucket names are global. A
    bucket of the same name in another store is another bucket."""
    if not endpoint_url:
        return "aws"
    parts = urlsplit(endpoint_url.strip())
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"
    default = {"http": 80, "https": 443}.get(scheme)
    port = "" if parts.port is None or parts.port == default else f":{parts.port}"
    return f"{scheme}://{host}{port}{parts.path.rstrip('/')}"


def object_key(prefix: str, file_name: str) -> str:
    """Where a file lives in the bucket: ``S3_PREFIX`` + its name."""
    return prefix + file_name


def cdn_address(cdn_base: str, key: str) -> str:
    """An object's address under ``CDN_BASE_URL`` (which maps to the bucket's root)."""
    return f"{cdn_base.rstrip('/')}/{quote(key)}"


def sha256_b64(data: bytes | memoryview) -> str:
    """The base64 SHA-256 S3 expects in ``ChecksumSHA256``."""
    return base64.b64encode(hashlib.sha256(data).digest()).decode("ascii")


def _failure(exc: BaseException, action: str, where: str) -> MirrorFailed:
    if isinstance(exc, botocore.exceptions.ClientError):
        error = exc.response.get("Error", {})
        code = str(error.get("Code", "Unknown"))
        status = int(exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0) or 0)
        message = str(error.get("Message", "")).strip()
        # 501: the store does not implement it, and never will on a retry.
        transient = code in _TRANSIENT_CODES or (status >= 500 and status != 501)
        detail = f"{code}" + (f" ({message})" if message else "")
        return MirrorFailed(f"S3 refused to {action} {where}: {detail}", transient=transient)
    if isinstance(
        exc, botocore.exceptions.NoCredentialsError | botocore.exceptions.PartialCredentialsError
    ):
        return MirrorFailed(
            f"cannot {action} {where}: no usable AWS credentials in boto3's standard chain",
            transient=False,
        )
    if isinstance(exc, _NETWORK_ERRORS):
        return MirrorFailed(f"cannot reach S3 to {action} {where}: {exc}", transient=True)
    return MirrorFailed(f"cannot {action} {where}: {type(exc).__name__}: {exc}", transient=False)


def _signing_failure(exc: BaseException, where: str) -> MirrorFailed:
    if isinstance(
        exc, botocore.exceptions.NoCredentialsError | botocore.exceptions.PartialCredentialsError
    ):
        return _failure(exc, "sign a URL of", where)
    # The credential source's answer (STS, an agent) may be long garbage: a line's worth.
    detail = f"{type(exc).__name__}: {exc}"[:SIGNING_ERROR_CHARS]
    return MirrorFailed(f"cannot sign a URL of {where}: {detail}", transient=True)


def _error_code(exc: MirrorFailed) -> str | None:
    cause = exc.__cause__
    if not isinstance(cause, botocore.exceptions.ClientError):
        return None
    return str(cause.response.get("Error", {}).get("Code", "")) or None


def _unsupported(exc: MirrorFailed) -> bool:
    """Whether the store said it does not implement what was asked (HTTP 501 and kin)."""
    cause = exc.__cause__
    if not isinstance(cause, botocore.exceptions.ClientError):
        return False
    status = int(cause.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0) or 0)
    return status == 501 or _error_code(exc) in _UNSUPPORTED_CODES


def _no_such_object(exc: MirrorFailed) -> bool:
    """Whether the store's answer behind ``exc`` was "no such key" (HEAD says a bare 404)."""
    cause = exc.__cause__
    if not isinstance(cause, botocore.exceptions.ClientError):
        return False
    return cause.response.get("Error", {}).get("Code") in ("404", "NoSuchKey", "NotFound")


class S3Store:
    """One bucket and prefix, reached through one boto3 client and a bounded thread pool.
    Create it once per process and ``close()`` it on the way out."""

    def __init__(self, settings: Settings, *, threads: int = THREADS) -> None:
        if settings.s3_bucket is None:
            raise ValueError("S3Store needs S3_BUCKET")
        self.bucket = settings.s3_bucket
        self.prefix = settings.s3_prefix
        self.identity = store_identity(settings.s3_endpoint_url)
        """The store the bucket lives in (``store_identity``), recorded with each copy."""
        self.part_size = settings.s3_part_size
        self._cdn_base = settings.cdn_base_url.rstrip("/") if settings.cdn_base_url else None
        self.presign_seconds = settings.s3_presign_seconds
        self.checksums = True
        """Whether the store takes SHA-256 checksums on uploads; turned off for the process at
        the first upload a store refuses for them (the read-back still verifies every copy)."""
        self._endpoint = settings.s3_endpoint_url
        # SigV4 signs the host, so a redirect's URL is made for the endpoint downloaders reach,
        # not rewritten afterwards.
        self._public_endpoint = settings.s3_public_endpoint_url or settings.s3_endpoint_url
        self._session = bounded_session()
        self._pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="s3")
        self._lock = threading.Lock()
        self._client: Any = None
        self._urls: Any = None
        self._signer: Signer | None = None

    # Both clients are made on first use, on the thread that needs them: making one loads
    # credentials, which from the container endpoint or the instance role is a network fetch.
    # The API only presigns: it never makes the first, and makes the second on its signer.

    def _s3(self) -> Any:
        with self._lock:  # boto3 makes no two clients of one session at once safely
            if self._client is None:
                config = Config(
                    connect_timeout=5,
                    read_timeout=60,
                    retries={"max_attempts": 3, "mode": "standard"},
                    # We send SHA-256 checksums ourselves; no extra CRC32 on every request.
                    request_checksum_calculation="when_required",
                    response_checksum_validation="when_required",
                )
                self._client = self._session.client(
                    "s3", endpoint_url=self._endpoint, config=config
                )
            return self._client

    def _op(self, operation: str) -> Callable[..., Any]:
        """A client operation, looked up on the pool's thread that runs it."""
        return lambda **kwargs: getattr(self._s3(), operation)(**kwargs)

    def _signing_client(self) -> Any:
        with self._lock:  # boto3 makes no two clients of one session at once safely
            if self._urls is None:
                # Path-style on an S3-compatible store (a host name per bucket rarely resolves).
                style = {"addressing_style": "path"} if self._public_endpoint else {}
                self._urls = self._session.client(
                    "s3",
                    endpoint_url=self._public_endpoint,
                    config=Config(signature_version="s3v4", s3=style),
                )
            return self._urls

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)
        if self._signer is not None:
            self._signer.close()
        # Not under the lock: a client still being made (a credential fetch) must not hold
        # the caller; it is dropped with the process.
        for client in (self._client, self._urls):
            if client is not None:
                client.close()

    # --- names and addresses --------------------------------------------------------------

    def key_for(self, file_name: str) -> str:
        return object_key(self.prefix, file_name)

    @property
    def behind_cdn(self) -> bool:
        return self._cdn_base is not None

    def cdn_url(self, key: str) -> str | None:
        """The object's address under ``CDN_BASE_URL`` (which maps to the bucket's root)."""
        return None if self._cdn_base is None else cdn_address(self._cdn_base, key)

    async def prepare_signing(self) -> None:
        """Make the signing client now, on the signer's thread, and wait for it at most
        ``SIGNER_START_SECONDS``: the first download would otherwise pay for it inside its
        ``PRESIGN_TIMEOUT_SECONDS`` (loading botocore's models is CPU work that a loaded node
        stretches past a second; for the container endpoint or an instance role it also
        fetches credentials). Whatever fails here, the first signing tries again."""
        if self.behind_cdn:
            return
        made = self._signer_thread().submit(self._signing_client)
        with contextlib.suppress(Exception):
            async with asyncio.timeout(SIGNER_START_SECONDS):
                await asyncio.wrap_future(made)

    def _signer_thread(self) -> Signer:
        if self._signer is None:  # only the event loop's thread gets here
            self._signer = Signer()
        return self._signer

    async def public_url(self, key: str) -> str:
        """Where a redirect sends a client: under ``CDN_BASE_URL`` when set, else a presigned
        GET of the object valid for ``S3_PRESIGN_SECONDS``, signed off the event loop within
        ``PRESIGN_TIMEOUT_SECONDS``. The URL carries a signature: it is never logged. Raises
        ``MirrorFailed`` for any failure to sign (no credentials; a credential source that
        refused, answered garbage or did not answer in time)."""
        cdn = self.cdn_url(key)
        if cdn is not None:
            return cdn
        signed = self._signer_thread().submit(partial(self._presign, key))
        where = self.where(key)
        try:
            async with asyncio.timeout(PRESIGN_TIMEOUT_SECONDS):
                return await asyncio.wrap_future(signed)
        except TimeoutError as exc:
            signed.cancel()  # if it has not started; else it ends within the credential bounds
            raise MirrorFailed(
                f"cannot sign a URL of {where}: no credentials within "
                f"{PRESIGN_TIMEOUT_SECONDS:g} s (the credential source does not answer)",
                transient=True,
            ) from exc
        except Exception as exc:  # botocore's parser errors are no BotoCoreError: any at all
            raise _signing_failure(exc, where) from exc

    def _presign(self, key: str) -> str:
        url: str = self._signing_client().generate_presigned_url(
            "get_object",
            Params={"Bucket": self.bucket, "Key": key},
            ExpiresIn=self.presign_seconds,
        )
        return url

    def where(self, key: str) -> str:
        return f"s3://{self.bucket}/{key}"

    # --- calls ----------------------------------------------------------------------------

    async def _call(self, action: str, key: str, fn: Callable[..., T], /, **kwargs: Any) -> T:
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(self._pool, partial(fn, **kwargs))
        except MirrorFailed:
            raise
        except Exception as exc:
            raise _failure(exc, action, self.where(key)) from exc

    async def check_bucket(self) -> None:
        """HEAD the bucket: ``MirrorFailed`` when this store, bucket and these credentials
        cannot be used (the same ``s3:ListBucket`` the mirror needs to tell a missing object
        from a refused one)."""
        await self._call("reach the bucket", "", self._op("head_bucket"), Bucket=self.bucket)

    async def head(self, key: str) -> StoredObject | None:
        """The object's size and ETag, or None when there is no such object."""
        try:
            reply = await self._call(
                "look up", key, self._op("head_object"), Bucket=self.bucket, Key=key
            )
        except MirrorFailed as exc:
            if _no_such_object(exc):
                return None
            raise
        return StoredObject(key, int(reply["ContentLength"]), str(reply["ETag"]))

    async def put_small(self, key: str, body: bytes, headers: ObjectHeaders) -> StoredObject:
        """One request for an object of at most one part."""

        async def put(checksum: dict[str, str]) -> dict[str, Any]:
            return await self._call(
                "upload",
                key,
                self._op("put_object"),
                Bucket=self.bucket,
                Key=key,
                Body=body,
                ContentType=headers.content_type,
                ContentDisposition=headers.content_disposition,
                CacheControl=headers.cache_control,
                **checksum,
            )

        reply = await self._with_checksums(
            key, lambda: put({"ChecksumSHA256": sha256_b64(body)}), lambda: put({})
        )
        return StoredObject(key, len(body), str(reply["ETag"]))

    async def _with_checksums(
        self,
        key: str,
        with_checksums: Callable[[], Awaitable[T]],
        without: Callable[[], Awaitable[T]],
    ) -> T:
        """``with_checksums()``, or ``without()`` on a store that refuses SHA-256 checksums
        (remembered for the process): nothing is lost, every copy is read back and hashed."""
        if not self.checksums:
            return await without()
        try:
            return await with_checksums()
        except MirrorFailed as exc:
            if _error_code(exc) not in _CHECKSUM_REFUSALS and not _unsupported(exc):
                raise
            self.checksums = False
            log.warning("s3_checksums_unsupported", key=key, error=str(exc))
            return await without()

    async def put_multipart(
        self, key: str, parts: AsyncIterator[bytes], headers: ObjectHeaders
    ) -> StoredObject:
        """A multipart upload of ``parts`` (each ``part_size`` bytes but the last), one part
        uploading while the next is read. Any failure, cancellation included, aborts the upload
        so no parts are left behind in the bucket (when the store still answers; otherwise
        ``abort_incomplete`` clears them on the next try)."""

        async def create(checksum: dict[str, str]) -> dict[str, Any]:
            return await self._call(
                "start an upload of",
                key,
                self._op("create_multipart_upload"),
                Bucket=self.bucket,
                Key=key,
                ContentType=headers.content_type,
                ContentDisposition=headers.content_disposition,
                CacheControl=headers.cache_control,
                **checksum,
            )

        created = await self._with_checksums(
            key, lambda: create({"ChecksumAlgorithm": "SHA256"}), lambda: create({})
        )
        checksums = self.checksums
        upload_id = str(created["UploadId"])
        done: list[dict[str, Any]] = []
        size = 0
        in_flight: asyncio.Future[dict[str, Any]] | None = None
        try:
            number = 0
            async for part in parts:
                number += 1
                size += len(part)
                if in_flight is not None:
                    done.append(await in_flight)
                in_flight = asyncio.ensure_future(
                    self._upload_part(key, upload_id, number, part, checksums=checksums)
                )
                del part  # the task holds the bytes now; memory is two parts at most
            if in_flight is not None:
                done.append(await in_flight)
                in_flight = None
            reply = await self._call(
                "finish the upload of",
                key,
                self._op("complete_multipart_upload"),
                Bucket=self.bucket,
                Key=key,
                UploadId=upload_id,
                MultipartUpload={"Parts": done},
            )
        except BaseException:
            if in_flight is not None:
                in_flight.cancel()
                await asyncio.gather(in_flight, return_exceptions=True)
            await asyncio.shield(self._abort(key, upload_id))
            raise
        return StoredObject(key, size, str(reply["ETag"]))

    async def _upload_part(
        self, key: str, upload_id: str, number: int, body: bytes, *, checksums: bool
    ) -> dict[str, Any]:
        checksum = {"ChecksumSHA256": sha256_b64(body)} if checksums else {}
        reply = await self._call(
            f"upload part {number} of",
            key,
            self._op("upload_part"),
            Bucket=self.bucket,
            Key=key,
            UploadId=upload_id,
            PartNumber=number,
            Body=body,
            **({"ChecksumAlgorithm": "SHA256"} if checksums else {}),
            **checksum,
        )
        return {"PartNumber": number, "ETag": reply["ETag"], **checksum}

    async def _abort(self, key: str, upload_id: str) -> bool:
        try:
            await self._call(
                "abort the upload of",
                key,
                self._op("abort_multipart_upload"),
                Bucket=self.bucket,
                Key=key,
                UploadId=upload_id,
            )
        except MirrorFailed:
            return False  # the store is away; abort_incomplete() clears it on the next run
        return True

    async def abort_incomplete(self, key: str) -> int:
        """Abort every unfinished multipart upload of ``key`` (left by a process that died or a
        store that went away mid-upload); returns how many. A store that cannot list them
        (ListMultipartUploads not implemented, as in s3rver) has nothing this could abort."""
        try:
            reply = await self._call(
                "list unfinished uploads of",
                key,
                self._op("list_multipart_uploads"),
                Bucket=self.bucket,
                Prefix=key,
            )
        except MirrorFailed as exc:
            if _unsupported(exc):
                return 0
            raise
        aborted = 0
        for upload in reply.get("Uploads", []):
            if upload.get("Key") == key and await self._abort(key, str(upload["UploadId"])):
                aborted += 1
        return aborted

    async def read_back(self, key: str) -> ReadBack | None:
        """Stream the object from the store and hash it, holding one block at a time; None when
        there is no such object."""
        try:
            return await self._call("read back", key, self._read_back_blocking, key=key)
        except MirrorFailed as exc:
            if _no_such_object(exc):
                return None
            raise

    async def read_range(self, key: str, start: int, end: int) -> ReadBack | None:
        """Bytes ``[start, end)`` of the object, hashed as they stream (a ranged GET); None when
        there is no such object. ``size`` is what the store sent: less than asked when the
        object is shorter (none at all when it ends before ``start``)."""
        try:
            return await self._call(
                "read part of", key, self._read_back_blocking, key=key, byte_range=(start, end)
            )
        except MirrorFailed as exc:
            if _no_such_object(exc):
                return None
            if _error_code(exc) == "InvalidRange":  # 416: the object ends before ``start``
                return ReadBack(hashlib.sha256().hexdigest(), 0, "")
            raise

    def _read_back_blocking(
        self, *, key: str, byte_range: tuple[int, int] | None = None
    ) -> ReadBack:
        ranged = {}
        if byte_range is not None:
            ranged["Range"] = f"bytes={byte_range[0]}-{byte_range[1] - 1}"
        reply = self._s3().get_object(Bucket=self.bucket, Key=key, **ranged)
        digest = hashlib.sha256()
        size = 0
        body = reply["Body"]
        try:
            for block in body.iter_chunks(READ_BLOCK):
                digest.update(block)
                size += len(block)
        finally:
            body.close()
        return ReadBack(digest.hexdigest(), size, str(reply["ETag"]))

    async def delete(self, key: str) -> None:
        await self._call("delete", key, self._op("delete_object"), Bucket=self.bucket, Key=key)


async def require_bucket(settings: Settings) -> None:
    """Refuse, in one line, to go on with S3 settings that cannot reach the bucket: a worker
    with a wrong bucket, endpoint or credentials would otherwise start silently and fail every
    mirror job. ``ConfigError`` when the store refused (no such bucket, access denied),
    ``StoreUnavailable`` when it did not answer ``BUCKET_CHECK_TRIES`` times."""
    store = S3Store(settings, threads=1)
    where = f"s3://{store.bucket}/ at {settings.s3_endpoint_url or 'AWS S3'}"
    fix = (
        "check S3_BUCKET, S3_ENDPOINT_URL and the credentials (boto3's chain), "
        "or unset S3_BUCKET to run without the mirror"
    )
    try:
        for attempt in range(1, BUCKET_CHECK_TRIES + 1):
            try:
                await store.check_bucket()
                return
            except MirrorFailed as exc:
                if not exc.transient:
                    raise ConfigError(
                        f"the S3 mirror cannot use {where}: {_bucket_refusal(exc)}; {fix}"
                    ) from exc
                if attempt == BUCKET_CHECK_TRIES:
                    raise StoreUnavailable(
                        f"the S3 mirror cannot reach {where}: {_cause_text(exc)}; {fix}"
                    ) from exc
            await asyncio.sleep(BUCKET_CHECK_PAUSE_SECONDS)
    finally:
        await asyncio.to_thread(store.close)


def _bucket_refusal(exc: MirrorFailed) -> str:
    code = _error_code(exc)
    if code in ("404", "NoSuchBucket", "NotFound"):
        return "no such bucket"
    if code in ("403", "AccessDenied", "Forbidden"):
        return "access denied (the credentials, or their s3:ListBucket on the bucket)"
    return _cause_text(exc)


def _cause_text(exc: MirrorFailed) -> str:
    cause = exc.__cause__
    return str(cause) if cause is not None else str(exc)
