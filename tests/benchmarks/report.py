"""The run's table on the terminal, ``results.json`` and ``RESULTS.md``. The JSON holds one
entry per section (its figures, the machine and load it ran with), so running one section
replaces its own entry and keeps the others'; RESULTS.md is rendered from it, keeping the
hand-written notes between its ``notes`` markers."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from .figures import Figure

NOTES_START, NOTES_END = "<!-- notes:start -->", "<!-- notes:end -->"
DEFAULT_NOTES = "How to read these figures, and what the profiles show, goes here (kept)."
HEADER = ("section", "figure", "ours", "reference", "ratio", "target", "met")


def _number(value: float | None) -> str:
    if value is None:
        return ""
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:,.2f}"


def rows(figures: list[Figure]) -> list[tuple[str, ...]]:
    return [
        (
            f.section,
            f.name,
            f"{_number(f.value)} {f.unit}",
            f"{_number(f.reference)} {f.unit} ({f.reference_name})" if f.reference else "",
            f"{f.ratio:.2f} x" if f.ratio is not None else "",
            f.target,
            "yes" if f.met else "NO",
        )
        for f in figures
    ]


def table(figures: list[Figure]) -> str:
    """A plain text table for the terminal."""
    lines = [HEADER, *rows(figures)]
    widths = [max(len(line[i]) for line in lines) for i in range(len(HEADER))]
    out = ["  ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=True)) for line in lines]
    out.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(x.rstrip() for x in out)


def merge_json(path: Path, sections: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Write ``sections`` into the JSON file at ``path``, keeping the entries of sections that
    did not run; returns the whole document."""
    document: dict[str, Any] = {"sections": {}}
    if path.exists():
        document = json.loads(path.read_text())
    document["sections"].update(sections)
    document["sections"] = dict(sorted(document["sections"].items()))
    path.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n")
    return document


def _markdown_table(figures: list[Figure]) -> list[str]:
    out = ["| " + " | ".join(HEADER[1:]) + " |", "|" + "---|" * (len(HEADER) - 1)]
    for row in rows(figures):
        out.append("| " + " | ".join(cell.replace("|", "\\|") for cell in row[1:]) + " |")
    return out


def render_markdown(document: dict[str, Any], previous: str | None) -> str:
    notes = DEFAULT_NOTES
    if previous and (found := re.search(f"{NOTES_START}\n(.*?){NOTES_END}", previous, re.S)):
        notes = found.group(1).rstrip("\n")
    out = [
        "# Benchmark results",
        "",
        "Written by `.venv/bin/python -m tests.benchmarks --size full` (one section:",
        "`--only http`); the same figures are in `results.json`. Every ratio is our value over",
        "a reference measured side by side in the same run; no figure is an absolute time.",
        "Only the notes between the markers below are hand-written.",
        "",
        NOTES_START,
        notes,
        NOTES_END,
    ]
    for name, entry in document["sections"].items():
        figures = [Figure.from_json(f) for f in entry["figures"]]
        machine = entry["machine"]
        out += ["", f"## {name}", ""]
        out += _markdown_table(figures)
        out += [
            "",
            f"Run {machine['date']}, size `{entry['size']}`, {entry['seconds']:.0f} s; load "
            f"average {machine['load_average_at_start']} at the start, "
            f"{entry['load_average_at_end']} at the end.",
            "",
            "| machine | |",
            "|---|---|",
        ]
        out += [f"| {key} | {value} |" for key, value in machine.items() if "load" not in key]
    return "\n".join(out) + "\n"
