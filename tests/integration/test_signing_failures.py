"""Credentials never stall a download (issue 34). With IRSA, boto3 fetches credentials from STS
when the API first presigns a redirect; an STS that accepted and never answered hung downloads
for minutes (and, the presign running on the event loop, every other request with them), one
that answered an error gave a 500. Here a stand-in STS on loopback (``sts_standin``) hangs,
answers garbage, answers an empty error or refuses connections, while the real API runs as a
process with the web-identity environment and the copies verified in a moto server: every
download is answered by the API with the right bytes within seconds, the rest of the API is
never held up, the failure is logged once and counted; and when STS answers again, downloads
are redirected again."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from gomoku_archive.db.archive_store import ArchiveRow
from gomoku_archive.db.pool import Pool
from gomoku_archive.settings import Settings
from gomoku_archive.storage.mirror import ArchiveMirror
from gomoku_archive.storage.s3 import S3Store
from gomoku_archive.storage.s3_session import CREDENTIAL_ATTEMPTS, bounded_session
from gomoku_archive.web.redirect_signer import RETRY_PAUSE_SECONDS
from tests.integration.api_support import ServerProcess, publish_bytes, random_bytes
from tests.integration.s3_support import CREDENTIALS, moto_server, new_bucket
from tests.integration.sts_standin import (
    AWS_KEYS,
    Mode,
    StandInSts,
    stand_in_sts,
    web_identity_env,
)

FILES = "/api/v1/database/files/"
ANSWERED_WITHIN = 10.0
"""A download's bound here: the API gives a presign PRESIGN_TIMEOUT_SECONDS (2 s); the rest is
margin for a loaded machine. Before this change a hanging STS held a download 150 s or more."""
CLIENT_TIMEOUT = aiohttp.ClientTimeout(total=45)
"""So that code which stalls fails the test rather than hanging it."""


@pytest.fixture(scope="module")
def moto() -> Iterator[str]:
    with moto_server() as endpoint:
        yield endpoint


@pytest.fixture
def no_aws_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the web-identity chain may give the API credentials."""
    for name in AWS_KEYS:
        monkeypatch.delenv(name, raising=False)


def s3_settings(db_dsn: str, moto: str) -> Settings:
    bucket = new_bucket(moto)
    return Settings(database_url=db_dsn, s3_bucket=bucket, s3_prefix="db/", s3_endpoint_url=moto)


async def mirrored_file(pool: Pool, settings: Settings, seed: int) -> ArchiveRow:
    """A published file with its copy verified in the moto server, uploaded with moto's test
    keys (the API under test never has them)."""
    row = await publish_bytes(pool, "2026-08", random_bytes(300_000, seed=seed))
    with pytest.MonkeyPatch.context() as keys:
        for name, value in CREDENTIALS.items():
            keys.setenv(name, value)
        store = S3Store(settings)
        try:
            assert (await ArchiveMirror(pool, store).mirror(row.id)).action == "uploaded"
        finally:
            store.close()
    return row


@contextlib.asynccontextmanager
async def api_with_web_identity(
    db_dsn: str, settings: Settings, sts: StandInSts, tmp_path: Path
) -> AsyncIterator[ServerProcess]:
    env = web_identity_env(sts, tmp_path / "token") | {
        "S3_BUCKET": str(settings.s3_bucket),
        "S3_PREFIX": settings.s3_prefix,
        "S3_ENDPOINT_URL": str(settings.s3_endpoint_url),
    }
    server = ServerProcess(db_dsn, extra_env=env)
    await asyncio.to_thread(server.start)
    try:
        yield server
    finally:
        await asyncio.to_thread(server.stop)


async def timed_get(session: aiohttp.ClientSession, url: str) -> tuple[int, str, float, float]:
    """(status, sha256 of the body, seconds to the answer, when it came on the monotonic
    clock), redirects not followed."""
    started = time.monotonic()
    async with session.get(url, allow_redirects=False) as response:
        answered = time.monotonic()
        body = await response.read()
    return response.status, hashlib.sha256(body).hexdigest(), answered - started, answered


def events(server: ServerProcess) -> list[dict[str, Any]]:
    lines = server.output.decode().splitlines()
    return [json.loads(line) for line in lines if line.startswith("{")]


def unsigned_counts(metrics_text: str) -> dict[str, float]:
    counts = {}
    for line in metrics_text.splitlines():
        if line.startswith("gomoku_download_redirects_unsigned_total{"):
            labels, value = line.rsplit(" ", 1)
            counts[labels.split('reason="', 1)[1].split('"', 1)[0]] = float(value)
    return counts


@pytest.mark.parametrize("mode", ["hangs", "garbage", "empty_error", "refuses"])
async def test_downloads_never_wait_on_credentials(
    mode: Mode, db_dsn: str, pool: Pool, moto: str, no_aws_keys: None, tmp_path: Path
) -> None:
    settings = s3_settings(db_dsn, moto)
    row = await mirrored_file(pool, settings, seed=340)
    file_url = FILES + str(row.file_name)
    async with (
        stand_in_sts(mode) as sts,
        api_with_web_identity(db_dsn, settings, sts, tmp_path) as api,
        aiohttp.ClientSession(api.base, timeout=CLIENT_TIMEOUT) as session,
    ):
        # The first download meets the credential source; a list the API serves from memory,
        # asked meanwhile, must not wait for it.
        first, listing = await asyncio.gather(
            timed_get(session, file_url), timed_get(session, "/api/v1/database/list.txt")
        )
        later = [await timed_get(session, file_url) for _ in range(3)]
        checksum = await timed_get(session, file_url + ".sha256")
        async with session.get("/metrics") as got:
            counts = unsigned_counts(await got.text())
    print(
        f"{mode}: first download {first[2]:.2f} s, list.txt {listing[2]:.2f} s, later "
        f"{', '.join(f'{g[2]:.2f}' for g in later)} s, .sha256 {checksum[2]:.2f} s; "
        f"STS saw {sts.requests} connections; counted {counts}"
    )
    for status, digest, seconds, _ in [first, *later]:
        assert (status, digest) == (200, row.sha256), "served by the API, whole and right"
        assert seconds < ANSWERED_WITHIN
    assert checksum[0] == 200 and checksum[2] < ANSWERED_WITHIN
    assert listing[0] == 200
    if mode == "hangs":
        assert listing[3] < first[3], "list.txt was answered while the download waited"
    failed = [e for e in events(api) if e["event"] == "download_signing_failed"]
    assert len(failed) == 1, "one line for the whole failure, not one per download"
    assert failed[0]["level"] == "warning" and failed[0]["served_by"] == "api"
    assert not [e for e in events(api) if e["level"] in ("error", "critical")]
    assert sum(counts.values()) == 5, "every download served instead of redirected is counted"
    assert counts.get("timeout" if mode == "hangs" else "error") == 1
    assert counts.get("paused") == 4, "tried again only after the pause"


async def test_redirects_resume_when_credentials_return(
    db_dsn: str, pool: Pool, moto: str, no_aws_keys: None, tmp_path: Path
) -> None:
    settings = s3_settings(db_dsn, moto)
    row = await mirrored_file(pool, settings, seed=341)
    file_url = FILES + str(row.file_name)
    async with (
        stand_in_sts("empty_error") as sts,
        api_with_web_identity(db_dsn, settings, sts, tmp_path) as api,
        aiohttp.ClientSession(api.base, timeout=CLIENT_TIMEOUT) as session,
    ):
        status, digest, _, failed_at = await timed_get(session, file_url)
        assert (status, digest) == (200, row.sha256)
        await sts.set_mode("answers")
        statuses = []
        while (status := (await timed_get(session, file_url))[0]) != 302:
            statuses.append(status)
            assert time.monotonic() - failed_at < RETRY_PAUSE_SECONDS + ANSWERED_WITHIN
            await asyncio.sleep(0.5)
        async with session.get(file_url, allow_redirects=False) as response:
            location = response.headers["Location"]
        async with (
            aiohttp.ClientSession(timeout=CLIENT_TIMEOUT) as anonymous,
            anonymous.get(location) as copy,
        ):
            body = await copy.read()
    assert set(statuses) <= {200}, "served here until the pause was over"
    assert location.startswith(moto + "/") and "X-Amz-Signature=" in location
    assert hashlib.sha256(body).hexdigest() == row.sha256
    names = [e["event"] for e in events(api)]
    assert names.count("download_signing_failed") == 1
    assert names.count("download_signing_recovered") == 1


@pytest.mark.parametrize("source", ["sts", "container"])
async def test_a_credential_source_that_hangs_is_given_up_within_seconds(
    source: str, monkeypatch: pytest.MonkeyPatch, no_aws_keys: None, tmp_path: Path
) -> None:
    """The bound below the presign's: the thread that fetches is free again after
    CREDENTIAL_ATTEMPTS tries of a few seconds each (botocore's own: 60 s reads, up to 5 tries
    for STS; 3 for the container endpoint), so a source that hangs holds no thread for long."""
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    async with stand_in_sts("hangs") as sts:
        if source == "sts":
            for name, value in web_identity_env(sts, tmp_path / "token").items():
                monkeypatch.setenv(name, value)
        else:  # ECS and EKS Pod Identity: a full URI on loopback is allowed
            monkeypatch.setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", sts.endpoint + "/creds")
        session = bounded_session()

        def fetch() -> object:
            credentials = session.get_credentials()
            return credentials.get_frozen_credentials()

        started = time.monotonic()
        with pytest.raises(Exception) as raised:  # noqa: PT011 (botocore's, whichever)
            await asyncio.wait_for(asyncio.to_thread(fetch), 30)
        seconds = time.monotonic() - started
    print(f"{source}: gave up after {seconds:.2f} s, {sts.requests} tries: {raised.value!r}")
    assert not isinstance(raised.value, TimeoutError), "still waiting after 30 s"
    assert sts.requests == CREDENTIAL_ATTEMPTS
