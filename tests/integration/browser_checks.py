"""axe-core and Lighthouse for the browser tests, from npm at the versions pinned in
``deploy/browser-checks/package-lock.json``. ``deploy/test.sh`` installs them into
``.cache/browser-checks/`` (``ensure_browser_checks`` in deploy/lib/bootstrap.sh); a test run
without them runs that function, and fails, never skips, when they cannot be had. Both drive
Debian's chromium: axe inside the Playwright page under test, Lighthouse through its own
launcher with ``CHROME_PATH`` and the flags of a closed network."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from playwright.async_api import Page

from tests.integration.conftest import CHROMIUM, CHROMIUM_ARGS

ROOT = Path(__file__).resolve().parents[2]
TOOLS = ROOT / ".cache" / "browser-checks" / "node_modules"
AXE = TOOLS / "axe-core" / "axe.min.js"
LIGHTHOUSE = TOOLS / "lighthouse" / "cli" / "index.js"


def ensure_tools() -> None:
    if AXE.is_file() and LIGHTHOUSE.is_file():
        return
    fetched = subprocess.run(
        ["bash", "-c", "source deploy/lib/bootstrap.sh && ensure_browser_checks"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert fetched.returncode == 0 and AXE.is_file() and LIGHTHOUSE.is_file(), (
        "axe-core and Lighthouse could not be installed (ensure_browser_checks in "
        f"deploy/lib/bootstrap.sh): {fetched.stderr[-2000:]}"
    )


async def axe_violations(page: Page) -> list[dict[str, Any]]:
    """axe-core's violations of the page as loaded, every rule axe runs by default (the
    best-practice ones, such as landmark-one-main and region, included). The page's context
    must allow the test's script (``bypass_csp=True``: the pages forbid all scripts)."""
    ensure_tools()
    await page.add_script_tag(content=AXE.read_text(encoding="utf-8"))
    result: dict[str, Any] = await page.evaluate(
        "async () => await axe.run(document, {resultTypes: ['violations']})"
    )
    return [
        {
            "id": v["id"],
            "impact": v["impact"],
            "help": v["help"],
            "nodes": [n["target"] for n in v["nodes"]][:5],
        }
        for v in result["violations"]
    ]


def lighthouse(url: str, *, report: Path) -> dict[str, Any]:
    """Lighthouse's performance audit of ``url`` as a phone (its default: a Moto G-class
    screen, simulated slow 4G and a 4x slower CPU); writes the JSON report to ``report`` and
    returns it."""
    ensure_tools()
    report.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="lighthouse-profile-") as profile:
        flags = [
            "--headless=new",
            *CHROMIUM_ARGS,
            "--disable-quic",
            f"--user-data-dir={profile}",
        ]
        done = subprocess.run(
            [
                "node",
                str(LIGHTHOUSE),
                url,
                "--only-categories=performance",
                "--output=json",
                f"--output-path={report}",
                f"--chrome-flags={' '.join(flags)}",
                "--quiet",
            ],
            env={**os.environ, "CHROME_PATH": CHROMIUM},
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
    assert done.returncode == 0, done.stderr[-3000:]
    document: dict[str, Any] = json.loads(report.read_text(encoding="utf-8"))
    return document


def performance(report: dict[str, Any]) -> dict[str, float]:
    """The figures the issue asks about: the score (0-100), total blocking time, DOM size."""
    audits = report["audits"]
    return {
        "score": round(report["categories"]["performance"]["score"] * 100),
        "total_blocking_time_ms": audits["total-blocking-time"]["numericValue"],
        "largest_contentful_paint_ms": audits["largest-contentful-paint"]["numericValue"],
        "dom_elements": audits["dom-size"]["numericValue"],
    }
