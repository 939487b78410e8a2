"""A stand-in for AWS STS on a loopback port, as boto3's web-identity chain (IRSA) reaches it
through ``AWS_ENDPOINT_URL_STS``: it answers AssumeRoleWithWebIdentity the way a test asks,
and the test may change its way at any moment. ``web_identity_env`` points boto3 at it."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Literal

from tests.integration.conftest import free_port

Mode = Literal["answers", "hangs", "garbage", "empty_error", "refuses"]

ROLE_ARN = "arn:aws:iam::123456789012:role/gomoku-archive"
_CREDENTIALS_XML = """<AssumeRoleWithWebIdentityResponse \
xmlns="https://sts.amazonaws.com/doc/2011-06-15/">
  <AssumeRoleWithWebIdentityResult>
    <Credentials>
      <AccessKeyId>ASIASTANDIN0000000001</AccessKeyId>
      <SecretAccessKey>stand-in-secret-key</SecretAccessKey>
      <SessionToken>stand-in-session-token</SessionToken>
      <Expiration>{expiration}</Expiration>
    </Credentials>
    <AssumedRoleUser>
      <Arn>arn:aws:sts::123456789012:assumed-role/gomoku-archive/test</Arn>
      <AssumedRoleId>AROASTANDIN:test</AssumedRoleId>
    </AssumedRoleUser>
  </AssumeRoleWithWebIdentityResult>
  <ResponseMetadata><RequestId>00000000-0000-0000-0000-000000000000</RequestId></ResponseMetadata>
</AssumeRoleWithWebIdentityResponse>
"""


class StandInSts:
    """``mode``: ``answers`` (credentials valid for an hour), ``hangs`` (reads the request and
    never answers), ``garbage`` (200 with a body that is no XML), ``empty_error`` (500 with an
    empty body), ``refuses`` (nothing listens: connections are refused). ``requests`` counts
    the connections it accepted."""

    def __init__(self, mode: Mode) -> None:
        self.port = free_port()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self.requests = 0
        self._mode: Mode = mode
        self._server: asyncio.Server | None = None
        self._held: set[asyncio.StreamWriter] = set()

    async def set_mode(self, mode: Mode) -> None:
        self._mode = mode
        if mode == "refuses" and self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None
        elif mode != "refuses" and self._server is None:
            self._server = await asyncio.start_server(self._handle, "127.0.0.1", self.port)

    async def close(self) -> None:
        for writer in list(self._held):
            writer.transport.abort()
        if self._server is not None:
            self._server.close()
            self._server = None

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.requests += 1
        with contextlib.suppress(ConnectionError, asyncio.IncompleteReadError):
            head = await reader.readuntil(b"\r\n\r\n")
            length = next(
                (
                    int(line.split(b":", 1)[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length:")
                ),
                0,
            )
            await reader.readexactly(length)
            if self._mode == "hangs":
                self._held.add(writer)  # open, silent, until the test ends
                return
            writer.write(self._answer())
            await writer.drain()
        writer.close()

    def _answer(self) -> bytes:
        if self._mode == "garbage":
            return _response(200, b"<<<\x00 this is not an STS answer \xff>>>", "text/xml")
        if self._mode == "empty_error":
            return _response(500, b"", "text/xml")
        expiration = (datetime.now(UTC) + timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
        return _response(200, _CREDENTIALS_XML.format(expiration=expiration).encode(), "text/xml")


def _response(status: int, body: bytes, content_type: str) -> bytes:
    reason = {200: "OK", 500: "Internal Server Error"}[status]
    head = (
        f"HTTP/1.1 {status} {reason}\r\nContent-Type: {content_type}\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    return head.encode("ascii") + body


@contextlib.asynccontextmanager
async def stand_in_sts(mode: Mode) -> AsyncIterator[StandInSts]:
    sts = StandInSts(mode)
    await sts.set_mode(mode)
    try:
        yield sts
    finally:
        await sts.close()


def web_identity_env(sts: StandInSts, token_file: Path) -> dict[str, str]:
    """The environment IRSA gives a pod, with STS at the stand-in and nothing else in boto3's
    chain: no keys, no shared files, no instance metadata."""
    token_file.write_text("stand-in-web-identity-token\n", encoding="ascii")
    return {
        "AWS_ROLE_ARN": ROLE_ARN,
        "AWS_WEB_IDENTITY_TOKEN_FILE": str(token_file),
        "AWS_ROLE_SESSION_NAME": "gomoku-archive-test",
        "AWS_ENDPOINT_URL_STS": sts.endpoint,
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_SHARED_CREDENTIALS_FILE": str(token_file.with_name("no-credentials")),
        "AWS_CONFIG_FILE": str(token_file.with_name("no-config")),
        "AWS_EC2_METADATA_DISABLED": "true",
    }


AWS_KEYS = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE")
"""What must not be in the environment for the web-identity chain to be the one used."""
