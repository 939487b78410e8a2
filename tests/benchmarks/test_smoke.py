"""CI keeps the suite working: the runner at its smoke size, on every section that exists,
writing to a temporary directory (never over the recorded RESULTS.md). Only the presence and
shape of the figures is checked; their values are the full run's business."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HTTP_FIGURES = {
    "manifest, 1 connection",
    "manifest, 64 connections",
    "download 4 MiB, 1 client",
    "download 4 MiB, 16 clients",
    "server RSS growth, 16 downloads at once",
}
FIELDS = {"section", "name", "unit", "value", "reference", "ratio", "target", "met"}


@pytest.mark.slow
def test_the_smoke_run_writes_every_figure(tmp_path: Path) -> None:
    results = ROOT / "tests/benchmarks/RESULTS.md"
    recorded = results.read_bytes() if results.exists() else None
    run = subprocess.run(
        [sys.executable, "-m", "tests.benchmarks", "--size", "smoke", "--out", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout + run.stderr

    document = json.loads((tmp_path / "results.json").read_text())
    sections = document["sections"]
    assert "http" in sections
    markdown = (tmp_path / "RESULTS.md").read_text()
    for name, entry in sections.items():
        assert entry["size"] == "smoke"
        assert entry["machine"]["nproc"] >= 1
        assert entry["figures"], name
        for figure in entry["figures"]:
            assert figure.keys() >= FIELDS
            assert math.isfinite(figure["value"]) and figure["value"] >= 0
            if figure["reference"] is not None:
                assert figure["reference"] > 0 and math.isfinite(figure["ratio"])
            assert figure["name"] in run.stdout  # the table
            assert figure["name"] in markdown
    assert {f["name"] for f in sections["http"]["figures"]} == HTTP_FIGURES
    assembly = {f["name"]: f for f in sections["assembly"]["figures"]}
    (same_bytes,) = [f for name, f in assembly.items() if name.endswith("new and before")]
    assert same_bytes["value"] == 1  # the assembly's bytes are the assembly before's
    pool = {f["name"]: f for f in sections["pool"]["figures"]}
    assert any("simulated workers, 1 SIGKILLed" in name for name in pool), list(pool)
    (pool_bytes,) = [f for name, f in pool.items() if name.startswith("SHA-256s of the month")]
    assert pool_bytes["value"] == 1  # the same file from 1, 2 and more workers
    projected = {f["name"] for f in sections["projection"]["figures"]}
    assert {f"{g}M games on {w} workers" for g in (10, 100) for w in (4, 8, 16, 32)} <= projected
    if recorded is not None:
        assert results.read_bytes() == recorded
