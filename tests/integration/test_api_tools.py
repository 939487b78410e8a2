"""``/database/tools/``: the tool's wheel as ``serve`` builds it in a checkout, served like the
other downloads (strong ETag, Last-Modified, 304, one Range), its checksum line, and a listing
that pip reads as a find-links page; without a wheel the listing names the package index."""

from __future__ import annotations

import asyncio
import hashlib
import zipfile
from collections.abc import AsyncIterator
from io import BytesIO
from pathlib import Path

import pytest

from gomoku_archive.db.pool import Pool
from gomoku_archive.settings import Settings
from gomoku_archive.web.tools_wheel import ensure_wheel, wheel_name
from tests.integration.api_support import Client, code_block, serving

pytestmark = pytest.mark.slow


@pytest.fixture
async def api(db_dsn: str, pool: Pool) -> AsyncIterator[Client]:
    assert await asyncio.to_thread(ensure_wheel, Settings()) is not None
    async with serving(db_dsn, pool) as client:
        yield client


async def test_the_wheel_is_served_like_a_download(api: Client) -> None:
    name = wheel_name()
    response = await api.get(f"/database/tools/{name}")
    assert response.status == 200
    data = await response.read()
    sha256 = hashlib.sha256(data).hexdigest()
    assert response.headers["ETag"] == f'"{sha256}"'
    assert response.headers["Content-Disposition"] == f'attachment; filename="{name}"'
    assert response.headers["Accept-Ranges"] == "bytes"
    with zipfile.ZipFile(BytesIO(data)) as wheel:
        assert "gomoku_archive/cli/sync_cmd.py" in wheel.namelist()
        (metadata,) = [n for n in wheel.namelist() if n.endswith(".dist-info/METADATA")]
        requires = [
            line
            for line in wheel.read(metadata).decode().splitlines()
            if line.startswith("Requires-Dist:") and "extra ==" not in line
        ]
        assert requires == ["Requires-Dist: rich<16,>=15"]  # the light install: rich alone
    again = await api.get(f"/database/tools/{name}", headers={"If-None-Match": f'"{sha256}"'})
    assert again.status == 304
    since = response.headers["Last-Modified"]
    assert (
        await api.get(f"/database/tools/{name}", headers={"If-Modified-Since": since})
    ).status == 304
    part = await api.get(f"/database/tools/{name}", headers={"Range": "bytes=100-199"})
    assert part.status == 206 and await part.read() == data[100:200]
    line = await (await api.get(f"/database/tools/{name}.sha256")).text()
    assert line == f"{sha256}  {name}\n"
    assert (await api.get("/database/tools/other-1.0-py3-none-any.whl")).status == 404


async def test_the_listing_is_a_find_links_page(api: Client) -> None:
    listing = await (await api.get("/database/tools/")).text()
    data = await (await api.get(f"/database/tools/{wheel_name()}")).read()
    assert f'href="{wheel_name()}#sha256={hashlib.sha256(data).hexdigest()}"' in listing
    base = str(api.make_url("")).rstrip("/")
    assert code_block(listing, "install").splitlines() == [
        f"pip install {base}/database/tools/{wheel_name()}",
        f"pipx run --spec {base}/database/tools/{wheel_name()} gomoku-archive --help",
    ]


async def test_without_a_wheel_the_pages_name_the_package_index(
    db_dsn: str, pool: Pool, tmp_path: Path
) -> None:
    settings = Settings(database_url=db_dsn, redis_url="redis://127.0.0.1:1/0", tools_dir=tmp_path)
    async with serving(db_dsn, pool, settings=settings) as client:
        listing = await (await client.get("/database/tools/")).text()
        assert 'id="no-wheel"' in listing and "pip install gomoku-party-archive" in listing
        page = await (await client.get("/database/")).text()
        install, sync = code_block(page, "sync").splitlines()
        assert (install, sync.split(" --base-url")[0]) == (
            "pip install gomoku-party-archive",
            "gomoku-archive sync gomoku-party",
        )
        assert (await client.get(f"/database/tools/{wheel_name()}")).status == 404
