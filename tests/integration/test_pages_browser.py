"""The public pages in a real headless Chromium (Debian's, driven by Playwright): the table
matches the manifest, the links download the real files, the details and the chart are there,
the page works without JavaScript, fits 1280 px and phones of 320, 360 and 390 px without
sideways scrolling (``/ops/`` too: every cell whole on screen, no scroller that clips, code
wrapping at spaces only), months have anchors, and the statistics are SVG pictures with
titles and descriptions; / leads a browser to it, and errors are pages. Screenshots go to
tests/artifacts/."""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestServer
from playwright.async_api import Browser, Page, ViewportSize

from gomoku_archive.db import archive_store, source
from gomoku_archive.db.pool import Pool
from gomoku_archive.demo.games import generate_month
from gomoku_archive.export.month import export_month
from gomoku_archive.gomoku.game import Reason, Termination
from gomoku_archive.profile.months import Month
from gomoku_archive.profile.writer import ROOT_PROPERTIES
from gomoku_archive.queue.connection import connect
from gomoku_archive.queue.enqueue import enqueue_forced_export
from gomoku_archive.settings import Settings
from gomoku_archive.web.app import create_app
from gomoku_archive.web.ops import page as ops_page
from tests.integration.api_support import ARTIFACTS, Client, publish_demo_month

pytestmark = pytest.mark.browser

PHONE: ViewportSize = {"width": 390, "height": 844}
PHONES: list[ViewportSize] = [
    {"width": 320, "height": 640},
    {"width": 360, "height": 740},
    PHONE,
]
"""The narrowest phones still sold, a common Android width, and an iPhone's."""
LAYOUT = """() => [document.documentElement.scrollWidth, document.documentElement.clientWidth,
  [...document.querySelectorAll('body *')]
    .filter(e => e.getBoundingClientRect().right > document.documentElement.clientWidth + 0.5)
    .map(e => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') + ': '
      + (e.textContent || '').trim().slice(0, 60))]"""
"""The page's width against the layout viewport's (``clientWidth``: on a phone, with
``is_mobile``, ``innerWidth`` grows to the content and hides the overflow), and what sticks out."""
DESKTOP: ViewportSize = {"width": 1280, "height": 900}


@pytest.fixture
async def api_data(pool: Pool) -> None:
    """``api`` serves three months: 80 games, none, 45 games."""
    await publish_demo_month(pool, Month(2026, 8), 80, seed=1)
    await publish_demo_month(pool, Month(2026, 9), 0)
    await publish_demo_month(pool, Month(2026, 10), 45, seed=2)


async def manifest_of(api: Client) -> dict[str, Any]:
    document: dict[str, Any] = await (await api.get("/api/v1/database")).json()
    return document


async def screenshot(page: Page, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / name
    await page.screenshot(path=str(path), full_page=True)
    assert path.stat().st_size > 10_000


async def test_the_table_matches_the_manifest_and_links_download(
    api: Client, browser: Browser, tmp_path: Path
) -> None:
    manifest = await manifest_of(api)
    context = await browser.new_context(accept_downloads=True, viewport=DESKTOP)
    try:
        page = await context.new_page()
        response = await page.goto(str(api.make_url("/database/")))
        assert response is not None and response.status == 200
        assert await page.title() == "Gomoku Party open database"
        assert await page.text_content("#total-games") == f"{manifest['totalGames']:,}"

        rows = page.locator("#archives tr.month")
        assert await rows.count() == len(manifest["months"]) == 3
        for i, month in enumerate(manifest["months"]):  # newest first, like the manifest
            row = rows.nth(i)
            cells = row.locator("th, td")
            assert await cells.nth(0).inner_text() == month["month"]
            assert await cells.nth(1).inner_text() == f"{month['games']:,}"
            assert await row.get_attribute("id") == month["month"]
            assert await row.locator("a.self").get_attribute("href") == f"#{month['month']}"
            if month["file"] is None:
                assert await row.locator("a.download").count() == 0
                continue
            link = row.locator("a.download")
            assert await link.get_attribute("href") == month["downloadUrl"]
            assert await link.inner_text() == month["file"]
            assert await row.locator("a.checksum").get_attribute("href") == month["checksumUrl"]
            assert await row.locator("a.torrent").get_attribute("href") == month["torrentUrl"]
            sha = await row.locator("td.sha").inner_text()
            assert month["sha256"].startswith(sha.rstrip("…"))
            assert await row.locator("time").get_attribute("datetime") == month["publishedAt"]

        # Exclusions and results are one click away, natively (<details>, no script).
        details = page.locator('tr.details[data-month="2026-08"] details')
        exclusions = details.locator("ul").first
        assert not await exclusions.is_visible()
        await details.locator("summary").click()
        assert await exclusions.is_visible()
        august = next(m for m in manifest["months"] if m["month"] == "2026-08")
        text = await exclusions.inner_text()
        for reason, count in august["exclusions"].items():
            assert f"({reason}): {count:,}" in text  # a human label, then the code

        bars = page.locator("#games-per-month rect.bar")
        assert await bars.count() == 3
        assert "2026-08: 80 games" in (await bars.nth(0).text_content() or "")

        # The download link gives the real file under its own name; the checksum verifies it.
        newest = manifest["months"][0]
        async with page.expect_download() as info:
            await page.locator("#archives tr.month").first.locator("a.download").click()
        download = await info.value
        assert download.suggested_filename == newest["file"]
        saved = tmp_path / download.suggested_filename
        await download.save_as(str(saved))
        assert hashlib.sha256(saved.read_bytes()).hexdigest() == newest["sha256"]

        await screenshot(page, "database-desktop.png")

        # The checksum link downloads too, under its own name (Content-Disposition), and the
        # checksum file checks the archive saved beside it.
        async with page.expect_download() as info:
            await page.locator("#archives tr.month").first.locator("a.checksum").click()
        checksum = await info.value
        assert checksum.suggested_filename == newest["file"] + ".sha256"
        await checksum.save_as(str(tmp_path / checksum.suggested_filename))
        line = (tmp_path / checksum.suggested_filename).read_text()
        assert line == f"{newest['sha256']}  {newest['file']}\n"
    finally:
        await context.close()


async def test_the_page_works_without_javascript_and_on_a_phone(
    api: Client, browser: Browser
) -> None:
    manifest = await manifest_of(api)
    context = await browser.new_context(
        java_script_enabled=False, viewport=PHONE, is_mobile=True, device_scale_factor=2
    )
    try:
        page = await context.new_page()
        await page.goto(str(api.make_url("/database/")))
        assert await page.locator("#archives tr.month").count() == len(manifest["months"])
        assert await page.locator("#sample-line").is_visible()
        assert "sha256sum -c" in await page.locator("#verify + p + pre").inner_text()
        await screenshot(page, "database-phone.png")
    finally:
        await context.close()
    # Measure the layout (the test's own script, not the page's): nothing is wider than the
    # phone, the archives table included (long file names wrap).
    context = await browser.new_context(viewport=PHONE, is_mobile=True)
    try:
        page = await context.new_page()
        await page.goto(str(api.make_url("/database/")))
        page_width, table_width, viewport = await page.evaluate(
            "() => [document.documentElement.scrollWidth,"
            " document.querySelector('#archives').scrollWidth,"
            " document.documentElement.clientWidth]"
        )
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        await page.locator("#archives").screenshot(path=str(ARTIFACTS / "archives-phone.png"))
        assert page_width <= viewport
        assert table_width <= viewport
    finally:
        await context.close()


async def test_the_profile_page_documents_everything(api: Client, browser: Browser) -> None:
    context = await browser.new_context(java_script_enabled=False, viewport=DESKTOP)
    try:
        page = await context.new_page()
        response = await page.goto(str(api.make_url("/database/profile")))
        assert response is not None and response.status == 200
        standard = page.locator("#properties-table tbody tr")
        extensions = page.locator("#extensions-table tbody tr")
        assert await standard.count() + await extensions.count() == len(ROOT_PROPERTIES)
        for prop in ROOT_PROPERTIES:
            table = "#extensions-table" if prop.extension else "#properties-table"
            row = page.locator(f"{table} tbody tr", has=page.locator(f"#prop-{prop.ident}"))
            assert await row.count() == 1, prop.ident
            assert prop.meaning in await row.inner_text()
        extension_ids = {p.ident for p in ROOT_PROPERTIES if p.extension}
        assert {"XRT", "XTC", "XST", "XET", "XER"} <= extension_ids
        first_cells = "tbody tr td:first-child"
        terminations = await page.locator(f"#terminations-table {first_cells}").all_inner_texts()
        assert terminations == [t.value for t in Termination]
        reasons = await page.locator(f"#reasons-table {first_cells}").all_inner_texts()
        assert reasons == [r.value for r in Reason]
        assert await page.locator("svg.board circle").count() == 3
        assert (await page.locator("#example-line").inner_text()).endswith(";B[hh];W[ih];B[ii])")
        await screenshot(page, "profile-desktop.png")
        await page.set_viewport_size(PHONE)
        await screenshot(page, "profile-phone.png")
    finally:
        await context.close()


OVERFLOW = """() => [document.documentElement.scrollWidth, document.documentElement.clientWidth,
  [...document.querySelectorAll('.table-wrap')]
    .filter(w => w.scrollWidth > w.clientWidth + 1).map(w => w.firstElementChild.id)]"""
"""The page's width, the layout viewport's, and the tables that would scroll sideways."""


@pytest.mark.parametrize("viewport", PHONES, ids=lambda v: f"{v['width']}px")
@pytest.mark.parametrize(
    "path", ["/database/", "/database/2026/", "/database/files/", "/database/tools/"]
)
async def test_a_phone_never_scrolls_sideways(
    api: Client, browser: Browser, viewport: ViewportSize, path: str
) -> None:
    context = await browser.new_context(viewport=viewport, is_mobile=True, device_scale_factor=2)
    try:
        page = await context.new_page()
        response = await page.goto(str(api.make_url(path)))
        assert response is not None and response.status == 200
        page_width, layout_width, sticking_out = await page.evaluate(LAYOUT)
        assert layout_width == viewport["width"]
        assert page_width <= layout_width, sticking_out
    finally:
        await context.close()


PHONE_LAYOUT = r"""() => {
  const width = document.documentElement.clientWidth;  // the layout viewport, not innerWidth
  const shown = e => e.getClientRects().length > 0;
  const name = e => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '')
    + (e.className && typeof e.className === 'string' ? '.' + e.className.split(' ')[0] : '');
  // Every scroll container that scrolls: only a code block may, and only for a token wider
  // than the block, with the shadow that says so (a local background layer).
  const scrollers = [...document.querySelectorAll('body *')].filter(e => {
    const x = getComputedStyle(e).overflowX;
    return (x === 'auto' || x === 'scroll') && e.scrollWidth > e.clientWidth + 1;
  }).map(e => {
    const tokens = [...e.querySelectorAll('span.t')];
    const wide = tokens.some(t => t.getBoundingClientRect().width > e.clientWidth * 0.8);
    const cue = getComputedStyle(e).backgroundAttachment.includes('local');
    return {element: name(e), scroll: e.scrollWidth, client: e.clientWidth,
      allowed: e.tagName === 'PRE' && wide && cue};
  });
  // Every cell of every table that shows, whole inside the screen.
  const cut = [...document.querySelectorAll('table th, table td')].filter(shown).filter(c => {
    const r = c.getBoundingClientRect();
    return r.left < -0.5 || r.right > width + 0.5;
  }).map(c => name(c) + ': ' + c.textContent.trim().slice(0, 40));
  // Every line break inside a code block falls at a space (or, in an SGF record line,
  // between two properties): never inside a token.
  const broken = [];
  for (const block of document.querySelectorAll('pre')) {
    const walker = document.createTreeWalker(block, NodeFilter.SHOW_TEXT);
    let before = '', top = null;
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const range = document.createRange();
      for (let i = 0; i < node.length; i++) {
        range.setStart(node, i);
        range.setEnd(node, i + 1);
        const rects = [...range.getClientRects()].filter(r => r.width > 0);
        const char = node.data[i];
        if (rects.length && !/\s/.test(char)) {
          const now = Math.round(rects[0].top);
          const at = /\s/.test(before) || (block.classList.contains('sgf') && before === ']');
          if (top !== null && now > top && !at) {
            const text = block.textContent, k = text.indexOf(node.data) + i;
            broken.push(name(block) + ': ' + text.slice(Math.max(0, k - 12), k) + '|'
              + text.slice(k, k + 12));
          }
          top = now;
        }
        before = char;
      }
    }
  }
  return {page: document.documentElement.scrollWidth, viewport: width,
    scrollers, cut, broken, blocks: document.querySelectorAll('pre').length};
}"""
"""A phone's measure of a page: its width against the layout viewport's, the scroll
containers that scroll and whether they may, table cells cut by the screen's edge, and line
breaks inside a code block's tokens."""
REASON = "12 games aborted by a server fault were scored as wins; rebuilt with them excluded"
OPS_BEARER = {"Authorization": "Bearer test-ops-token-of-at-least-32-characters"}


@pytest.fixture
async def busy(settings: Settings, pool: Pool) -> AsyncIterator[TestServer]:
    """Both pages at their fullest: three months, one rebuilt for a reason with its earlier
    file kept, one with a long failure; two rebuilds waiting in the queue (so /ops/ lists jobs
    and their times)."""
    await publish_demo_month(pool, Month(2026, 8), 80, seed=1)
    await publish_demo_month(pool, Month(2026, 9), 0)
    await publish_demo_month(pool, Month(2026, 10), 45, seed=2)
    late = [
        tuple(getattr(g, c) for c in source.INSERT_COLUMNS)
        for g in generate_month(Month(2026, 10), 12, seed=3)
    ]
    async with pool.acquire() as conn:
        await source.insert_games(conn, "games", late)
        await archive_store.record_failure(
            conn, "2026-08", "ExportFailed: the source table answered with an error " * 4
        )
    rebuilt = await export_month(
        pool, table="games", month=Month(2026, 10), force=True, reason=REASON
    )
    assert rebuilt.outcome == "published"
    redis = await connect(settings.redis_url)
    try:
        now = datetime.now(UTC)
        for month in (Month(2026, 8), Month(2026, 9)):
            await enqueue_forced_export(redis, month, now=now, reason=f"{REASON} ({month})")
    finally:
        await redis.aclose(close_connection_pool=True)
    server = TestServer(create_app(settings, pool=pool))
    await server.start_server()
    try:
        yield server
    finally:
        await server.close()


@pytest.mark.parametrize("viewport", PHONES, ids=lambda v: f"{v['width']}px")
@pytest.mark.parametrize("path", ["/database/", "/ops/"])
async def test_both_pages_fit_a_phone_whole(
    busy: TestServer,
    browser: Browser,
    viewport: ViewportSize,
    path: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """No sideways scrolling, no scroller that clips a table (the months are cards on a phone,
    every cell whole on screen), and code that wraps at spaces, never inside a token; a token
    wider than the screen scrolls inside its own block, which shows a shadow at its edge."""
    monkeypatch.setattr(ops_page, "REFRESH_SECONDS", 0)  # /ops/ must not reload mid-measure
    context = await browser.new_context(
        viewport=viewport,
        is_mobile=True,
        device_scale_factor=2,
        extra_http_headers=OPS_BEARER,
    )
    try:
        page = await context.new_page()
        response = await page.goto(str(busy.make_url(path)))
        assert response is not None and response.status == 200
        sent_blocks = (await response.text()).count("<pre")
        if path == "/database/":
            await page.locator("#typed-recipes summary").click()  # its blocks measured too
            await page.locator("tr.details details summary").first.click()
            note = page.locator('tr.details[data-month="2026-10"] p.rebuild-reason')
            assert REASON in await note.inner_text()
        else:
            october = page.locator("#months tbody tr", has_text="2026-10")
            assert f"rebuilt because: {REASON}" in await october.inner_text()
        found = await page.evaluate(PHONE_LAYOUT)
        name = f"{path.strip('/')}-{viewport['width']}.png"
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        await page.screenshot(path=str(ARTIFACTS / f"phone-{name}"), full_page=True)
    finally:
        await context.close()
    assert found["viewport"] == viewport["width"]
    assert found["page"] <= found["viewport"], found
    assert [s for s in found["scrollers"] if not s["allowed"]] == [], found["scrollers"]
    assert found["cut"] == [], found["cut"]
    assert found["broken"] == [], found["broken"]
    assert found["blocks"] == sent_blocks and sent_blocks >= (11 if path == "/database/" else 0)


@pytest.mark.parametrize(("viewport", "name"), [(DESKTOP, "1280"), (PHONE, "390")])
async def test_the_database_page_fits_without_sideways_scrolling(
    api: Client, browser: Browser, viewport: ViewportSize, name: str
) -> None:
    manifest = await manifest_of(api)
    context = await browser.new_context(viewport=viewport, is_mobile=viewport is PHONE)
    try:
        page = await context.new_page()
        await page.goto(str(api.make_url("/database/")))
        page_width, inner_width, scrolling = await page.evaluate(OVERFLOW)
        assert page_width <= inner_width
        assert scrolling == []
        totals = {m["month"]: m for m in manifest["months"]}
        assert await page.locator("#total-bytes").is_visible()
        total_bytes = sum(m["bytes"] for m in totals.values())
        assert await page.locator("#total-bytes").get_attribute("title") == f"{total_bytes} bytes"
        unpacked = sum(m["uncompressedBytes"] for m in totals.values())
        assert await page.locator("#total-uncompressed").get_attribute("title") == (
            f"{unpacked} bytes"
        )
        rows = page.locator("#archives tr.month")
        for i in range(await rows.count()):
            row = rows.nth(i)
            month = totals[await row.get_attribute("id") or ""]
            # The essential columns, whole, inside the viewport.
            essential = [row.locator("th"), row.locator("td.games"), row.locator("td.size")]
            if month["file"]:
                essential.append(row.locator("a.download"))
            for cell in essential:
                assert await cell.is_visible()
                box = await cell.bounding_box()
                assert box is not None and box["x"] + box["width"] <= inner_width + 0.5
            others_shown = await row.locator("td.sha").is_visible()
            assert others_shown is (viewport is DESKTOP)
        await screenshot(page, f"database-{name}.png")
        await page.locator("#facts").screenshot(path=str(ARTIFACTS / f"facts-{name}.png"))
        await page.locator("#archives").screenshot(path=str(ARTIFACTS / f"archives-{name}.png"))

        # A month's anchor: /database/#2026-08 scrolls its row into view and marks it.
        await page.goto(str(api.make_url("/database/#2026-08")))
        target = page.locator("#archives tr.month:target")
        assert await target.get_attribute("id") == "2026-08"
        box = await target.bounding_box()
        assert box is not None and 0 <= box["y"] < viewport["height"]
    finally:
        await context.close()


STATS_FIGURES = ("winners", "lengths", "first-moves", "all-moves")


@pytest.mark.parametrize(("viewport", "name"), [(DESKTOP, "1280"), (PHONE, "390")])
async def test_the_statistics_are_pictures_a_screen_reader_can_name(
    api: Client, browser: Browser, viewport: ViewportSize, name: str
) -> None:
    manifest = await manifest_of(api)
    newest = manifest["months"][0]
    stats = newest["stats"]
    context = await browser.new_context(
        java_script_enabled=False, viewport=viewport, is_mobile=viewport is PHONE
    )
    try:
        page = await context.new_page()
        await page.goto(str(api.make_url("/database/")))
        assert await page.inner_text("h2#stats") == f"Statistics of {newest['month']}"
        width = viewport["width"]
        for month in ("newest", "2026-08"):
            if month != "newest":  # a month's own pictures are on its year's page
                details = page.locator(f'tr.details[data-month="{month}"] details')
                await details.locator("summary").click()
                await details.get_by_role("link", name=f"Pictures of {month}").click()
                await page.wait_for_url(f"**/database/2026/#{month}")
                details = page.locator(f'tr.details[data-month="{month}"] details')
                assert not await page.locator(f"#stats-{month}-winners").is_visible()
                await details.locator("summary").click()
            for figure in STATS_FIGURES:
                svg = page.locator(f"svg#stats-{month}-{figure}")
                assert await svg.is_visible(), (month, figure)
                assert await svg.get_attribute("role") == "img"
                title_id, desc_id = (await svg.get_attribute("aria-labelledby") or "").split()
                title = await svg.locator(f"title#{title_id}").text_content()
                desc = await svg.locator(f"desc#{desc_id}").text_content()
                assert title and title.startswith(newest["month"] if month == "newest" else month)
                assert desc and len(desc) > 40
                box = await svg.bounding_box()
                assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width
        winners = stats["winners"]
        desc = await page.locator(f"#stats-{newest['month']}-winners desc").text_content()
        assert desc is not None and desc.startswith(
            f"Of {newest['games']:,} games, black won {winners['black']:,}"
        )
        assert await page.locator(f"#stats-{newest['month']}-lengths rect.bar").count() == len(
            stats["length"]["histogram"]
        )
        # The zero-game month has no pictures, and says why (on the year's page, where the
        # test is now).
        empty = page.locator('tr.details[data-month="2026-09"] details')
        await empty.locator("summary").click()
        assert "No games, so nothing to draw." in await empty.inner_text()
        assert await page.locator('[id^="stats-2026-09-"]').count() == 0
        page_width, inner_width, _ = await page.evaluate(OVERFLOW)
        assert page_width <= inner_width
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        await page.locator("details[open] .stats").first.screenshot(
            path=str(ARTIFACTS / f"stats-{name}.png")
        )
        await screenshot(page, f"database-stats-{name}.png")
    finally:
        await context.close()


async def test_a_browser_is_sent_from_root_and_gets_error_pages(
    api: Client, browser: Browser
) -> None:
    context = await browser.new_context(java_script_enabled=False, viewport=PHONE)
    try:
        page = await context.new_page()
        response = await page.goto(str(api.make_url("/")))
        assert response is not None and response.status == 200
        assert page.url == str(api.make_url("/database/"))
        response = await page.goto(str(api.make_url("/no/such/page")))
        assert response is not None and response.status == 404
        assert await page.inner_text("h1") == "Not Found"
        assert await page.locator("main a[href='/database/']").count() >= 1
        page_width, inner_width, _ = await page.evaluate(OVERFLOW)
        assert page_width <= inner_width
        await screenshot(page, "error-404-phone.png")
    finally:
        await context.close()
