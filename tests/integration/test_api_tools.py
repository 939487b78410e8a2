"""``/database/tools/``: the tool's wheel as ``serve`` builds it in a checkout, served like the
other downloads (strong ETag, Last-Modified, 304, one Range), its checksum line, and a listing
that pip reads as a find-links page; without a wheel the listing names the package index."""

from __future__ import annotations

import asyncio
import hashlib
import shlex
import subprocess
import venv
import zipfile
from io import BytesIO
from pathlib import Path

import pytest

from gomoku_archive.db.pool import Pool
from gomoku_archive.settings import Settings
from gomoku_archive.web.tools_wheel import ensure_wheel, wheel_name
from tests.docs_pages import README, ROOT, commands
from tests.integration.api_support import Client, code_block, serving

pytestmark = pytest.mark.slow


@pytest.fixture
async def api_data() -> None:
    """``api`` serves the downloaders' wheel, built first."""
    assert await asyncio.to_thread(ensure_wheel, Settings()) is not None


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


SERVER_IMPORTS = ("aiohttp", "asyncpg", "arq", "redis", "boto3", "structlog", "jinja2")


async def test_the_readme_s_operator_install_line_installs_the_service_from_this_wheel(
    api: Client, tmp_path: Path
) -> None:
    """The package is not on the package index yet; the README's operator line installs the
    ``server`` extra from the wheel a running service serves. Run as printed, this server's
    address for gomokuparty.com (and the tested versions' constraints), in a fresh virtualenv:
    the service's commands and dependencies are there."""
    (line,) = [c for c in commands(README.read_text(encoding="utf-8")) if " @ http" in c]
    origin = "https://gomokuparty.com"
    assert f"{origin}/database/tools/{wheel_name()}" in line
    base = str(api.make_url("")).rstrip("/")
    argv = shlex.split(line.replace(origin, base))
    assert argv[:2] == ["pip", "install"]
    env = tmp_path / "venv"
    await asyncio.to_thread(venv.create, env, with_pip=True)
    constraints = ROOT / "deploy" / "constraints.txt"
    done = await run(env / "bin" / "python", "-m", *argv, "-q", "-c", constraints)
    assert done.returncode == 0, done.stderr[-3000:]
    probe = (
        f"import importlib.util as u; print([m for m in {SERVER_IMPORTS} if not u.find_spec(m)])"
    )
    found = await run(env / "bin" / "python", "-c", probe)
    assert found.stdout.strip() == "[]"  # every server dependency
    serve = await run(env / "bin" / "gomoku-archive", "serve", "--help")
    assert serve.returncode == 0, serve.stderr
    assert serve.stdout.startswith("usage: gomoku-archive serve")


async def run(*argv: str | Path) -> subprocess.CompletedProcess[str]:
    """A command in a thread, so that the server on this loop answers it."""
    return await asyncio.to_thread(
        subprocess.run, [str(a) for a in argv], capture_output=True, text=True, timeout=900
    )


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
