"""The manual's pages as the tests read them: a page of ``docs/``, one of its ``## `` sections, or
the text between a pair of ``<!-- NAME:start -->`` / ``<!-- NAME:end -->`` markers. Tests that
guard a documented fact read it here, from the page that documents it, not from the README."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
README = ROOT / "README.md"
MKDOCS_YML = ROOT / "mkdocs.yml"


def page(name: str) -> str:
    """The text of ``docs/<name>`` (``"downloaders.md"``, ``"operators/running.md"``)."""
    return (DOCS / name).read_text(encoding="utf-8")


def section(name: str, heading: str) -> str:
    """The ``## heading`` section of a page, up to the next ``## `` heading (subsections kept)."""
    text = page(name)
    marker = f"\n## {heading}\n"
    assert marker in text, f"docs/{name} has no section '## {heading}'"
    return text.split(marker, 1)[1].split("\n## ", 1)[0]


def between_markers(name: str, marker: str) -> str:
    """The text between ``<!-- marker:start -->`` and ``<!-- marker:end -->`` on a page."""
    text = page(name)
    start, end = f"<!-- {marker}:start -->", f"<!-- {marker}:end -->"
    assert text.count(start) == 1 and text.count(end) == 1, f"docs/{name}: {marker} markers"
    return text[text.index(start) : text.index(end)]


def code_blocks(text: str, language: str) -> list[str]:
    """The bodies of the fenced code blocks of one language, in order."""
    return re.findall(rf"^```{language}\n(.*?)^```", text, re.DOTALL | re.MULTILINE)


_FENCED = re.compile(r"^```.*?^```", re.DOTALL | re.MULTILINE)
_INLINE_CODE = re.compile(r"`([^`]+)`")


def commands(text: str) -> list[str]:
    """The commands a page shows: each line of its ``sh`` blocks (without its ``#`` comment),
    then each inline code span outside the blocks, its line breaks read as spaces (as Markdown
    renders a span that wraps)."""
    shown = [
        line.split(" #")[0].strip()
        for block in code_blocks(text, "sh")
        for line in block.splitlines()
        if line.strip()
    ]
    prose = _FENCED.sub("", text)
    return shown + [" ".join(span.split()) for span in _INLINE_CODE.findall(prose)]
