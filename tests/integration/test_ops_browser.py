"""The operator's way through ``/ops/`` in a real headless Chromium: the sign-in form, the months
table, a click on "Rebuild", and the job in the queue; and the dashboard at 1280 px and on a
390 px phone: nothing scrolls sideways or is cut off, and no file name or job id is squeezed to
a character or two per line."""

from __future__ import annotations

from typing import Any

import pytest
from aiohttp.test_utils import TestServer
from playwright.async_api import Browser, Page, ViewportSize

from gomoku_archive.db import archive_store
from gomoku_archive.db.pool import Pool
from gomoku_archive.export.month import export_month
from gomoku_archive.profile.months import Month
from gomoku_archive.settings import Settings
from gomoku_archive.web.app import create_app
from tests.integration.api_support import ARTIFACTS
from tests.integration.worker_support import seed_month

pytestmark = pytest.mark.browser

TOKEN = "test-ops-token-of-at-least-32-characters"


async def test_operator_signs_in_and_rebuilds_a_month(
    settings: Settings, pool: Pool, browser: Browser
) -> None:
    await seed_month(settings.database_url, Month(2026, 8), 40)
    await export_month(pool, table="games", month=Month(2026, 8))
    server = TestServer(create_app(settings, pool=pool))
    await server.start_server()
    try:
        page = await browser.new_page(viewport={"width": 1400, "height": 1000})
        response = await page.goto(str(server.make_url("/ops/")))
        assert response is not None
        assert response.status == 401
        await page.fill("#token", "wrong")
        await page.click("form[action='/ops/login'] button")
        assert "not the operator token" in await page.inner_text("body")

        await page.fill("#token", TOKEN)
        await page.click("form[action='/ops/login'] button")
        await page.wait_for_selector("#months")
        august = page.locator("#months tbody tr", has_text="2026-08")
        assert "published" in await august.inner_text()
        september = page.locator("#months tbody tr", has_text="2026-09")
        assert "missing" in await september.inner_text()

        await page.get_by_role("button", name="Rebuild 2026-09").click()
        # A confirmation page first (no script): Cancel goes back, nothing queued.
        assert await page.inner_text("h1") == "Rebuild 2026-09?"
        await page.get_by_role("link", name="Cancel").click()
        await page.wait_for_selector("#months")
        assert "queued" not in await september.inner_text()
        await page.get_by_role("button", name="Rebuild 2026-09").click()
        # The confirmation asks why: the browser does not send it without a reason.
        await page.get_by_role("button", name="Rebuild 2026-09").click()
        assert await page.inner_text("h1") == "Rebuild 2026-09?"
        await page.get_by_label("Why").fill("late games arrived")
        await page.get_by_role("button", name="Rebuild 2026-09").click()
        flash = await page.wait_for_selector("#flash")
        assert flash is not None
        message = await flash.inner_text()
        assert message.startswith("Rebuild of 2026-09 queued as export:2026-09:force:")
        job_id = message.removeprefix("Rebuild of 2026-09 queued as ").rstrip(".")
        assert job_id in await page.inner_text("#queued")
        assert "reason=late games arrived" in await page.inner_text("#queued")
        assert "queued" in await september.inner_text()

        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        await page.screenshot(path=str(ARTIFACTS / "ops-dashboard.png"), full_page=True)
    finally:
        await server.close()


LAYOUT = """() => {
  const cramped = [];
  for (const table of document.querySelectorAll('table')) {
    const walker = document.createTreeWalker(table, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const text = node.textContent.trim();
      if (text.length < 6 || node.parentElement.offsetParent === null) continue;
      const range = document.createRange();
      range.selectNodeContents(node);
      const lines = new Set([...range.getClientRects()].filter(r => r.width > 0)
        .map(r => Math.round(r.top))).size;
      if (lines > 1 && text.length / lines < 8) cramped.push([text, lines]);
    }
  }
  const scrolling = [...document.querySelectorAll('.wrap')]
    .filter(w => w.scrollWidth > w.clientWidth + 1).map(w => w.firstElementChild.id);
  const width = document.documentElement.clientWidth;  // the layout viewport, not innerWidth
  const cut = [...document.querySelectorAll('table th, table td')]
    .filter(c => c.offsetParent !== null && c.getBoundingClientRect().right > width + 0.5)
    .map(c => c.textContent.trim().slice(0, 40));
  return {page: document.documentElement.scrollWidth, viewport: width, cramped, scrolling,
    cut};
}"""
"""Text in the tables squeezed below 8 characters a line, tables that scroll sideways, cells
past the right edge, and the page's width against the viewport's."""

WIDE: ViewportSize = {"width": 1280, "height": 900}
PHONE: ViewportSize = {"width": 390, "height": 844}


async def measure(page: Page) -> dict[str, Any]:
    # Reload first: the dashboard refreshes itself every 10 s while jobs wait, and a reload in
    # the middle of the measurement would lose it.
    await page.reload()
    await page.wait_for_selector("#months")
    found: dict[str, Any] = await page.evaluate(LAYOUT)
    return found


async def test_the_dashboard_reads_at_1280_and_on_a_phone(
    settings: Settings, pool: Pool, browser: Browser
) -> None:
    await seed_month(settings.database_url, Month(2026, 8), 30)
    await export_month(pool, table="games", month=Month(2026, 8))
    async with pool.acquire() as conn:  # the busiest row: a file, a failure and a job at once
        await archive_store.record_failure(
            conn, "2026-08", "ExportFailed: the source table answered with an error " * 4
        )
    server = TestServer(create_app(settings, pool=pool))
    await server.start_server()
    context = await browser.new_context(viewport=WIDE)
    try:
        page = await context.new_page()
        await page.goto(str(server.make_url("/ops/")))
        await page.fill("#token", TOKEN)
        await page.click("form[action='/ops/login'] button")
        await page.wait_for_selector("#months")
        for month in ("2026-08", "2026-09"):
            await page.get_by_role("button", name=f"Rebuild {month}").click()
            await page.get_by_label("Why").fill(f"a reason for {month} that says what was wrong")
            await page.get_by_role("button", name=f"Rebuild {month}").click()  # confirmed
            await page.wait_for_selector("#flash")
        assert await page.locator("meta[http-equiv=refresh]").count() == 1
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        for viewport, name in ((WIDE, "1280"), (PHONE, "390")):
            await page.set_viewport_size(viewport)
            found = await measure(page)
            path = ARTIFACTS / f"ops-dashboard-{name}.png"
            await page.screenshot(path=str(path), full_page=True)
            await page.locator("#months").screenshot(path=str(ARTIFACTS / f"ops-months-{name}.png"))
            assert found["page"] <= found["viewport"], (name, found)
            assert found["scrolling"] == [], name
            assert found["cut"] == [], name
            assert found["cramped"] == [], name
            august = page.locator("#months tbody tr", has_text="2026-08")
            text = await august.inner_text()
            assert "gomoku-party-2026-08-" in text and "export:2026-08:force:" in text
            assert "the source table answered" in text
            assert await page.locator("#queued code.id").first.is_visible()
    finally:
        await context.close()
        await server.close()
