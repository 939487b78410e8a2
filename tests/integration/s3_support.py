"""Real S3-compatible servers for the mirror's tests: moto in server mode (``moto_server``) and,
as a second, independent implementation, the npm package s3rver (``s3rver_server``), each
started as a separate process on a loopback port; plus a TCP relay in front of a store that a
test can cut mid-transfer (the store vanishing under an upload, its state kept)."""

from __future__ import annotations

import asyncio
import contextlib
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
