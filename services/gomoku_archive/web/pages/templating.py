"""The one template engine of every HTML page, public and ``/ops/``: Jinja2 with autoescaping
on, templates in ``templates/`` beside this module (``ops/`` for the operators' pages,
``charts.html`` for the SVG chart macros). The filters here turn numbers and times into text,
and cut code into the tokens the ``code`` macro lays out; markup is written only in
templates."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from datetime import datetime
from typing import Any, Literal

import aiohttp_jinja2
import jinja2
from aiohttp import web
from markupsafe import Markup


def thousands(n: int) -> str:
    return f"{n:,}"


def human_bytes(n: int) -> str:
    """Binary units, as ``ls -h`` and download managers show them."""
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if value < 1024 or unit == "TiB":
            return f"{n} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


def instant(value: datetime | str | None) -> datetime | str | None:
    """A time as a datetime when it is one or reads as ISO 8601; other text as it is (the
    ``when`` macro of ``ops/macros.html`` shows it unchanged), None as None."""
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value)
        except ValueError:
            return value
    return value


def utc_text(value: datetime) -> str:
    return value.strftime("%Y-%m-%d %H:%M:%SZ")


def duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.1f} s"
    return f"{seconds / 60:.1f} min"


def age(seconds: float) -> str:
    """How long ago, to a person: ``45 s``, ``12 min``, ``5 h``, ``3 days``."""
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 2 * 3600:
        return f"{seconds / 60:.0f} min"
    if seconds < 2 * 86400:
        return f"{seconds / 3600:.0f} h"
    return f"{seconds / 86400:.0f} days"


CodeToken = tuple[Literal["text", "whole", "break"], str]
"""A token of a code block: text a line may wrap in (whitespace, or a plain word, inside which
no browser breaks), a token to keep on one line (``whole``), or a place a line may break
although no space is there (``break``, empty: between two SGF properties)."""

_BREAKABLE = re.compile(r"[^\w]")
"""A character a browser may break a line after or before inside a word (a hyphen, a slash, a
question mark, a bracket, ...): Chromium does so even with ``overflow-wrap: normal``."""
_SGF_PROPERTY = re.compile(r"\(?;?[A-Z]+(?:\[(?:[^\]\\]|\\.)*\])+\)?")
"""One property of an SGF line with its values, and the node's ``;`` or the tree's parentheses
that touch it."""


def code_tokens(text: str, sgf: bool = False) -> list[CodeToken]:
    """``text`` (a command, a program, an SGF line) as the ``code`` macro of ``code.html`` lays
    it out, so that its lines wrap only at spaces: runs of whitespace and plain words as they
    are, every other run of non-space characters as one ``whole`` token (a URL, an option, an
    expression). ``sgf``: a record line, whose tokens are its properties, with a ``break``
    between two of them (an SGF line has almost no spaces). Markup (a block the template
    captured, already escaped) stays Markup; the tokens join back into ``text``."""
    kind = Markup if isinstance(text, Markup) else str
    tokens: list[CodeToken] = []
    if sgf:
        end = 0
        for match in _SGF_PROPERTY.finditer(text):
            if match.start() > end:
                tokens.append(("text", kind(text[end : match.start()])))
            elif tokens:
                tokens.append(("break", kind("")))
            tokens.append(("whole", kind(match.group())))
            end = match.end()
        if end < len(text):
            tokens.append(("text", kind(text[end:])))
        return tokens
    for run in re.split(r"(\s+)", text):
        if run:
            whole = len(run) > 1 and not run.isspace() and _BREAKABLE.search(run) is not None
            tokens.append(("whole" if whole else "text", kind(run)))
    return tokens


FILTERS: dict[str, Callable[..., Any]] = {
    "age": age,
    "thousands": thousands,
    "human_bytes": human_bytes,
    "instant": instant,
    "utc_text": utc_text,
    "duration": duration,
    "code_tokens": code_tokens,
}


@functools.cache
def environment() -> jinja2.Environment:
    """The process's one environment (templates are parsed once and shared by every app)."""
    env = jinja2.Environment(
        loader=jinja2.PackageLoader(__name__.rpartition(".")[0], "templates"),
        autoescape=jinja2.select_autoescape(
            ("html", "svg", "xml"), default_for_string=True, default=True
        ),
        undefined=jinja2.StrictUndefined,  # a misspelt name fails the render, and the tests
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(FILTERS)
    return env


def render(name: str, /, **context: Any) -> str:
    """A template rendered outside a request: the cached public pages and the tests."""
    return environment().get_template(name).render(context)


def install(app: web.Application) -> None:
    """Register the environment where ``aiohttp_jinja2.render_template`` looks for it."""
    app[aiohttp_jinja2.APP_KEY] = environment()
