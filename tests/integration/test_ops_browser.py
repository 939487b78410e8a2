"""The operator's way through ``/ops/`` in a real headless Chromium: the sign-in form, the months
table, a click on "Rebuild", and the job in the queue."""

from __future__ import annotations

import pytest
from aiohttp.test_utils import TestServer
from playwright.async_api import Browser

from services.app import create_app
from shared.archive.export import export_month
from shared.archive.months import Month
from shared.db.pool import Pool
from shared.settings import Settings
from tests.integration.api_support import ARTIFACTS
from tests.integration.worker_support import seed_month

pytestmark = pytest.mark.browser


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

        await page.fill("#token", "test-ops-token-of-at-least-32-characters")
        await page.click("form[action='/ops/login'] button")
        await page.wait_for_selector("#months")
        august = page.locator("#months tbody tr", has_text="2026-08")
        assert "published" in await august.inner_text()
        september = page.locator("#months tbody tr", has_text="2026-09")
        assert "missing" in await september.inner_text()

        await page.get_by_role("button", name="Rebuild 2026-09").click()
        flash = await page.wait_for_selector("#flash")
        assert flash is not None
        message = await flash.inner_text()
        assert message.startswith("Rebuild of 2026-09 queued as export:2026-09:force:")
        job_id = message.removeprefix("Rebuild of 2026-09 queued as ").rstrip(".")
        assert job_id in await page.inner_text("#queued")
        assert "queued" in await september.inner_text()

        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        await page.screenshot(path=str(ARTIFACTS / "ops-dashboard.png"), full_page=True)
    finally:
        await server.close()
