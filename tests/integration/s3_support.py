"""Real S3-compatible servers for the mirror's tests: moto in server mode (``moto_server``) and,
as a second, independent implementation, the npm package s3rver (``s3rver_server``), each
started as a separate process on a loopback port; plus a TCP relay in front of a store that a
test can cut mid-transfer (the store vanishing under an upload, its state kept), a loopback CDN
in front of a bucket that can serve a wrong byte, and two blocks with the same MD5."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import boto3
import botocore.exceptions
from aiohttp import web
from aiohttp.test_utils import TestServer

from tests.integration.conftest import free_port

MOTO_SERVER = Path(sys.executable).with_name("moto_server")
ROOT = Path(__file__).resolve().parents[2]
S3RVER = ROOT / ".cache" / "s3rver" / "node_modules" / "s3rver" / "bin" / "s3rver.js"
S3RVER_CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "S3RVER",
    "AWS_SECRET_ACCESS_KEY": "S3RVER",
    "AWS_DEFAULT_REGION": "us-east-1",
}
"""s3rver's own fixed key pair: it checks signatures against it."""
CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_DEFAULT_REGION": "us-east-1",
}


class MotoServer:
    """``moto_server`` as a separate process on a loopback port of its own, which a test may
    SIGKILL and start again on the same port (moto keeps nothing: a restarted one is empty).
    With ``auth`` it checks credentials, and knows none, so it refuses every request (403) but
    the first ``free_requests`` (credentials revoked once those are done)."""

    def __init__(self, *, auth: bool = False, free_requests: int = 0) -> None:
        self.port = free_port()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        free = {"INITIAL_NO_AUTH_ACTION_COUNT": str(free_requests)}
        self._env = dict(os.environ) | (free if auth else {})
        self._process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self._process = subprocess.Popen(
            [str(MOTO_SERVER), "-H", "127.0.0.1", "-p", str(self.port)],
            env=self._env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 20
        while True:
            try:
                # moto's own API, which uses none of the free requests an S3 call would.
                with urllib.request.urlopen(f"{self.endpoint}/moto-api/", timeout=2):
                    return
            except (urllib.error.URLError, ConnectionError):
                if time.monotonic() > deadline or self._process.poll() is not None:
                    raise
                time.sleep(0.1)

    def kill(self) -> None:
        if self._process is not None:
            self._process.kill()
            self._process.wait(10)
            self._process = None

    def stop(self) -> None:
        if self._process is not None:
            self._process.terminate()
            self._process.wait(10)
            self._process = None


@contextlib.contextmanager
def moto_server(*, auth: bool = False, free_requests: int = 0) -> Iterator[str]:
    """A ``MotoServer`` for the block; yields its endpoint URL."""
    with running_moto(auth=auth, free_requests=free_requests) as server:
        yield server.endpoint


@contextlib.contextmanager
def running_moto(*, auth: bool = False, free_requests: int = 0) -> Iterator[MotoServer]:
    server = MotoServer(auth=auth, free_requests=free_requests)
    server.start()
    try:
        yield server
    finally:
        server.stop()


@contextlib.contextmanager
def s3rver_server(data_dir: Path) -> Iterator[str]:
    """s3rver (Node) as a separate process on a loopback port, its objects under ``data_dir``;
    yields its endpoint URL. ``deploy/test.sh`` installs it (``ensure_s3rver``); the tests run
    that function when it is missing and fail, never skip, without it."""
    if not S3RVER.exists():
        done = subprocess.run(
            ["bash", "-c", "source deploy/lib/bootstrap.sh && ensure_s3rver"],
            cwd=ROOT, capture_output=True, text=True, timeout=600, check=False,
        )  # fmt: skip
        assert done.returncode == 0 and S3RVER.exists(), done.stdout + done.stderr
    port = free_port()
    endpoint = f"http://127.0.0.1:{port}"
    process = subprocess.Popen(
        ["node", str(S3RVER), "-d", str(data_dir), "-a", "127.0.0.1", "-p", str(port), "--silent"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                client(endpoint, S3RVER_CREDENTIALS).list_buckets()
                break
            except botocore.exceptions.EndpointConnectionError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise
                time.sleep(0.1)
        yield endpoint
    finally:
        process.terminate()
        process.wait(10)


def client(endpoint: str, credentials: dict[str, str] = CREDENTIALS) -> Any:
    """A plain boto3 client: the tests' independent view of the bucket."""
    return boto3.client(
        "s3",
        endpoint_url=endpoint,
        aws_access_key_id=credentials["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=credentials["AWS_SECRET_ACCESS_KEY"],
        region_name=credentials["AWS_DEFAULT_REGION"],
    )


def new_bucket(endpoint: str, credentials: dict[str, str] = CREDENTIALS) -> str:
    name = f"gpa-test-{uuid.uuid4().hex[:12]}"
    client(endpoint, credentials).create_bucket(Bucket=name)
    return name


def object_bytes(
    endpoint: str, bucket: str, key: str, credentials: dict[str, str] = CREDENTIALS
) -> bytes:
    body: bytes = client(endpoint, credentials).get_object(Bucket=bucket, Key=key)["Body"].read()
    return body


def incomplete_uploads(endpoint: str, bucket: str) -> list[str]:
    reply = client(endpoint).list_multipart_uploads(Bucket=bucket)
    return [u["Key"] for u in reply.get("Uploads", [])]


class Relay:
    """A TCP relay to ``upstream`` on a loopback port of its own. ``cut_after(n)`` makes it
    drop every connection and stop listening once ``n`` bytes went upstream: to the client
    the store is gone mid-upload, while the store keeps what it received."""

    def __init__(self, upstream_port: int) -> None:
        self.upstream_port = upstream_port
        self.port = free_port()
        self.forwarded = 0
        self._limit: int | None = None
        self._then: Callable[[], None] | None = None
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self.cut = asyncio.Event()

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def cut_after(self, limit: int, then: Callable[[], None] | None = None) -> None:
        """Cut once ``limit`` more bytes went upstream, then call ``then`` (e.g. kill the
        store)."""
        self._limit = self.forwarded + limit
        self._then = then

    async def start(self) -> None:
        self.cut.clear()
        self._limit = None
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", self.port)

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None
        for writer in list(self._writers):
            writer.transport.abort()
        self._writers.clear()
        self.cut.set()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.upstream_port)
        self._writers |= {writer, up_writer}

        async def pump(src: asyncio.StreamReader, dst: asyncio.StreamWriter, up: bool) -> None:
            with contextlib.suppress(ConnectionError, OSError):
                while data := await src.read(65536):
                    dst.write(data)
                    await dst.drain()
                    if up:
                        self.forwarded += len(data)
                        if self._limit is not None and self.forwarded >= self._limit:
                            if self._then is not None:
                                self._then()
                            await self.stop()
                            return
            dst.close()

        await asyncio.gather(
            pump(reader, up_writer, True), pump(up_reader, writer, False), return_exceptions=True
        )
        self._writers -= {writer, up_writer}


@contextlib.asynccontextmanager
async def relay_to(endpoint: str) -> AsyncIterator[Relay]:
    relay = Relay(int(endpoint.rsplit(":", 1)[1]))
    await relay.start()
    try:
        yield relay
    finally:
        await relay.stop()


@dataclasses.dataclass(frozen=True)
class Store:
    """A running S3 implementation: its name, endpoint and the credentials it accepts; for
    s3rver, the folder its objects are files in."""

    name: str
    endpoint: str
    credentials: dict[str, str]
    data_dir: Path | None = None


@contextlib.contextmanager
def running_store(name: str, data_dir: Path) -> Iterator[Store]:
    """``moto`` or ``s3rver`` (its objects under ``data_dir``) for the block."""
    if name == "moto":
        with moto_server() as endpoint:
            yield Store("moto", endpoint, CREDENTIALS)
    else:
        with s3rver_server(data_dir) as endpoint:
            yield Store("s3rver", endpoint, S3RVER_CREDENTIALS, data_dir)


class LoopbackCdn:
    """A CDN in front of the bucket on a loopback port: it fetches objects with the bucket's
    credentials (as CloudFront's origin access does) and serves them to anyone, ranges too.
    ``mode`` ``ok``, ``wrong`` (the byte at ``damage_at`` flipped: a bad edge cache, of the
    right length) or ``forbidden`` (403, as a misconfigured origin). ``served`` counts the
    body bytes it sent."""

    def __init__(self, store: Store, bucket: str) -> None:
        self.mode = "ok"
        self.damage_at = 0
        self.served = 0
        self._s3 = client(store.endpoint, store.credentials)
        self._bucket = bucket
        app = web.Application()
        app.router.add_route("*", "/{key:.+}", self._handle)
        self.server = TestServer(app, host="127.0.0.1")

    @property
    def base(self) -> str:
        return str(self.server.make_url("")).rstrip("/")

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        if self.mode == "forbidden":
            return web.Response(status=403, text="AccessDenied")
        key = request.match_info["key"]
        wanted = request.headers.get("Range")
        try:
            # A ranged read fetches only its range from the bucket: the content check reads
            # 1 MiB windows of files of many MB every few seconds.
            reply = await asyncio.to_thread(
                lambda: self._s3.get_object(Bucket=self._bucket, Key=key, **_range(wanted))
            )
            body = await asyncio.to_thread(reply["Body"].read)
        except Exception:
            return web.Response(status=404)
        start = 0 if wanted is None else int(reply["ContentRange"].split()[1].split("-")[0])
        at = self.damage_at - start
        if self.mode == "wrong" and 0 <= at < len(body):
            body = body[:at] + bytes([body[at] ^ 1]) + body[at + 1 :]
        if wanted is None:
            self.served += 0 if request.method == "HEAD" else len(body)
            return web.Response(body=body)
        self.served += len(body)
        headers = {"Content-Range": reply["ContentRange"]}
        return web.Response(status=206, body=body, headers=headers)


def _range(header: str | None) -> dict[str, str]:
    return {} if header is None else {"Range": header}


COLLISION = (
    bytes.fromhex(
        "d131dd02c5e6eec4693d9a0698aff95c2fcab58712467eab4004583eb8fb7f89"
        "55ad340609f4b30283e488832571415a085125e8f7cdc99fd91dbdf280373c5b"
        "d8823e3156348f5bae6dacd436c919c6dd53e2b487da03fd02396306d248cda0"
        "e99f33420f577ee8ce54b67080a80d1ec69821bcb6a8839396f9652b6ff72a70"
    ),
    bytes.fromhex(
        "d131dd02c5e6eec4693d9a0698aff95c2fcab50712467eab4004583eb8fb7f89"
        "55ad340609f4b30283e4888325f1415a085125e8f7cdc99fd91dbd7280373c5b"
        "d8823e3156348f5bae6dacd436c919c6dd53e23487da03fd02396306d248cda0"
        "e99f33420f577ee8ce54b67080280d1ec69821bcb6a8839396f965ab6ff72a70"
    ),
)
"""Two 128-byte blocks with the same MD5 (Wang and Yu's 2004 collision). A file that starts
with the first and one that starts with the second, the rest alike, have the same length and
the same MD5, so the same S3 ETag: the damage is invisible to any HEAD."""
