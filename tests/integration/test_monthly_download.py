"""A researcher who downloads everything every month, with the commands the page prints: run
them twice in the same folder and the second run fetches nothing and duplicates nothing
(``wget -N``, aria2c with conditional GET); ``wget --mirror`` of /database/ exits 0 and a second
mirror run fetches no page again (Last-Modified on the pages, lists and feed); robots.txt and the
favicon are there."""

from __future__ import annotations

import re
import shutil
import struct
from pathlib import Path

import pytest

from gomoku_archive.db.pool import Pool
from gomoku_archive.profile.months import Month
from tests.integration.api_support import Client, code_block, publish_demo_month
from tests.integration.test_api_bulk_files import run

BASE = "/api/v1/database/"


@pytest.fixture
async def api_data(pool: Pool) -> None:
    """``api`` serves three months: 30 games, none, 20 games."""
    await publish_demo_month(pool, Month(2026, 8), 30, seed=1)
    await publish_demo_month(pool, Month(2026, 9), 0)
    await publish_demo_month(pool, Month(2026, 10), 20, seed=2)


def files(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())


async def test_the_pages_commands_are_safe_to_run_again(api: Client, tmp_path: Path) -> None:
    page = await (await api.get("/database/")).text()
    commands = [line.split() for line in code_block(page, "wget").splitlines()]
    assert [c[:2] for c in commands] == [["wget", "-N"], ["wget", "-N"], ["sha256sum", "-c"]]
    for attempt in (1, 2):
        for argv in commands:
            code, out = await run(*argv, cwd=tmp_path)
            assert code == 0, (attempt, argv, out)
        if attempt == 1:
            first = files(tmp_path)
            stamps = {name: (tmp_path / name).stat().st_mtime_ns for name in first}
    assert files(tmp_path) == first  # no gomoku-party-....sgf.gz.1 beside the first copies
    assert len([f for f in first if f.endswith(".sgf.gz")]) == 2
    assert {name: (tmp_path / name).stat().st_mtime_ns for name in first} == stamps


async def test_aria2c_with_conditional_get_fetches_nothing_twice(
    api: Client, tmp_path: Path
) -> None:
    assert shutil.which("aria2c"), "aria2c is missing: deploy/test.sh installs Debian's aria2"
    # The page's command, as printed (with the page's origin).
    page = (await (await api.get("/database/")).text()).replace("&amp;", "&")
    found = re.search(r"<code[^>]*>(curl -sO \S+ && aria2c [^<]+)</code>", page)
    assert found is not None
    for _ in (1, 2):
        code, out = await run("bash", "-c", found.group(1) + " -q", cwd=tmp_path)
        assert code == 0, out
    got = files(tmp_path)
    assert len([f for f in got if f.endswith(".sgf.gz")]) == 2, got
    assert not any(f.endswith((".1", ".aria2")) for f in got), got


async def test_wget_mirrors_the_database_page_and_a_second_run_fetches_no_page(
    api: Client, tmp_path: Path
) -> None:
    url = str(api.make_url("/database/"))
    code, out = await run("wget", "--mirror", "-nv", "-nH", url, cwd=tmp_path)
    assert code == 0, out
    mirrored = files(tmp_path)
    for expected in (
        "database/index.html",
        "database/profile",
        "database/2026/index.html",
        "api/v1/database/manifest.json",
        "api/v1/database/list.txt",
        "api/v1/database/sha256sums.txt",
        "api/v1/database/feed.atom",
        "favicon.ico",
        "robots.txt",
    ):
        assert expected in mirrored, (expected, mirrored)
    # Each file once under the API's address, once under /database/files/ (the mirrors' index).
    assert len({f.rsplit("/", 1)[1] for f in mirrored if f.endswith(".sgf.gz")}) == 2
    assert not any(f.startswith("ops") for f in mirrored)
    code, out = await run("wget", "--mirror", "-nv", "-nH", url, cwd=tmp_path)
    assert code == 0, out
    # Everything answered 304 or was skipped: no "URL:... -> file" line of a fetched body.
    fetched = [line for line in out.splitlines() if " -> " in line]
    assert fetched == [], out


async def test_pages_lists_and_feed_send_last_modified(api: Client) -> None:
    document = await (await api.get(BASE + "manifest.json")).json()
    newest = max(m["publishedAt"] for m in document["months"])
    for path in (
        "/database/",
        "/database/2026/",
        BASE + "list.txt",
        BASE + "sha256sums.txt",
        BASE + "feed.atom",
        "/database/profile",
    ):
        response = await api.get(path)
        assert response.status == 200, path
        since = response.headers["Last-Modified"]
        assert (await api.get(path, headers={"If-Modified-Since": since})).status == 304, path
    page = await api.get("/database/")
    assert page.headers["Last-Modified"].endswith("GMT")
    assert newest[:10]  # the page's date is the manifest's newest publication's
    from datetime import datetime
    from email.utils import parsedate_to_datetime

    assert parsedate_to_datetime(page.headers["Last-Modified"]) == datetime.fromisoformat(
        newest
    ).replace(microsecond=0)


async def test_robots_and_favicon(api: Client) -> None:
    robots = await api.get("/robots.txt")
    assert robots.status == 200
    text = await robots.text()
    assert "Disallow: /ops/" in text and "Allow: /database/" in text
    icon = await api.get("/favicon.ico")
    assert icon.status == 200
    assert icon.headers["Content-Type"] == "image/vnd.microsoft.icon"
    body = await icon.read()
    reserved, kind, count = struct.unpack("<HHH", body[:6])
    assert (reserved, kind, count) == (0, 1, 1)
    size, offset = struct.unpack("<II", body[14:22])
    assert body[offset : offset + 8] == b"\x89PNG\r\n\x1a\n" and offset + size == len(body)


async def current_files(api: Client) -> list[str]:
    document = await (await api.get(BASE + "manifest.json")).json()
    names = [m["file"] for m in document["months"] if m["file"]]
    names += [m["parquet"]["file"] for m in document["months"] if m.get("parquet")]
    return sorted([*names, *(f"{name}.sha256" for name in names)])


async def test_rclone_copies_every_current_file_then_nothing(api: Client, tmp_path: Path) -> None:
    """An rclone ``http`` remote on /database/files/ (the index of relative links): every
    current file and its checksum file; the second copy transfers nothing."""
    assert shutil.which("rclone"), "rclone is missing: deploy/lib/bootstrap.sh installs it"
    url = str(api.make_url("/database/files/"))
    target = tmp_path / "mirror"
    argv = ["rclone", "copy", ":http:", str(target), "--http-url", url, "--config", "/dev/null"]
    code, out = await run(*argv, "-v", cwd=tmp_path)
    assert code == 0, out
    assert files(target) == await current_files(api)
    assert out.count(": Copied (new)") == len(files(target))
    code, out = await run(*argv, "-v", cwd=tmp_path)
    assert code == 0, out
    assert "Copied" not in out, out
    assert files(target) == await current_files(api)


async def test_wget_mirror_no_parent_of_the_page_gets_every_file(
    api: Client, tmp_path: Path
) -> None:
    """``wget --mirror --no-parent`` of /database/ stays below it and still gets every current
    file (through /database/files/); a second run fetches nothing."""
    url = str(api.make_url("/database/"))
    argv = ["wget", "--mirror", "--no-parent", "-nv", "-nH", url]
    code, out = await run(*argv, cwd=tmp_path)
    assert code == 0, out
    mirrored = files(tmp_path)
    # robots.txt is wget's own fetch, whatever --no-parent says.
    assert [f for f in mirrored if not f.startswith("database/")] == ["robots.txt"], mirrored
    got = sorted(f.removeprefix("database/files/") for f in mirrored if "/files/" in f)
    assert [f for f in got if f != "index.html"] == await current_files(api)
    code, out = await run(*argv, cwd=tmp_path)
    assert code == 0, out
    assert [line for line in out.splitlines() if " -> " in line] == [], out


async def test_the_manifest_and_the_openapi_document_have_validators(api: Client) -> None:
    """A mirror that keeps dates (wget -N, rclone) or tags skips them when unchanged."""
    for path in (BASE + "manifest.json", "/api/v1/database", "/api/v1/openapi.json"):
        response = await api.get(path)
        assert response.status == 200, path
        assert response.headers["Cache-Control"].startswith("public, max-age="), path
        since = response.headers["Last-Modified"]
        assert (await api.get(path, headers={"If-Modified-Since": since})).status == 304, path
        tag = response.headers["ETag"]
        assert (await api.get(path, headers={"If-None-Match": tag})).status == 304, path
