"""``/database/tools/``: the downloaders' wheel (``tools_wheel``), its checksum line, and a
listing that is also a find-links page (each link carries ``#sha256=``, as PEP 503 pages do),
so ``pip install <host>/database/tools/<wheel>`` and ``pip install --find-links
<host>/database/tools/ gomoku-party-archive`` both work. Served from memory with an ETag (the
SHA-256), Last-Modified (the wheel's time), 304s and one Range, like the other downloads."""

from __future__ import annotations

from collections.abc import AsyncIterator

from aiohttp import hdrs, web

from gomoku_archive.http.conditions import Representation, strong_etag
from gomoku_archive.http.headers import CHECKSUM_CONTENT_TYPE, attachment
from gomoku_archive.profile.names import CHECKSUM_SUFFIX, checksum_line
from gomoku_archive.web.keys import SETTINGS, TOOLS
from gomoku_archive.web.pages.templating import render
from gomoku_archive.web.request_origin import origin_of, vary
from gomoku_archive.web.server.conditional import respond_bytes
from gomoku_archive.web.server.encoded import Encoded, encode, respond_encoded
from gomoku_archive.web.server.http_errors import NotFound
from gomoku_archive.web.tools_wheel import ToolsWheel, find_wheel

TOOLS_PATH = "/database/tools/"
TOOLS_CACHING = "public, max-age=3600"
"""Not immutable: the version's wheel is rebuilt with each release of the service."""
WHEEL_CONTENT_TYPE = "application/zip"
HTML = "text/html; charset=utf-8"


class ToolsPages:
    """The listing as rendered per origin (its commands name this host), for the wheel the
    app serves."""

    def __init__(self) -> None:
        self._pages: dict[str, Encoded] = {}

    def listing(self, wheel: ToolsWheel | None, origin: str) -> Encoded:
        if origin not in self._pages:
            if len(self._pages) > 64:  # every Host a client sends is an origin: bounded
                self._pages.clear()
            page = render("tools.html", wheel=wheel, origin=origin, tools_path=TOOLS_PATH)
            self._pages[origin] = encode(page.encode("utf-8"))
        return self._pages[origin]


TOOLS_PAGES = web.AppKey("tools_pages", ToolsPages)


async def load(app: web.Application) -> AsyncIterator[None]:
    """``cleanup_ctx``: read the wheel once (a few hundred kB) when the app starts."""
    path = find_wheel(app[SETTINGS])
    app[TOOLS].wheel = None if path is None else ToolsWheel.read(path)
    yield


async def listing(request: web.Request) -> web.Response:
    wheel = request.app[TOOLS].wheel
    listing_caching: dict[str, str] = {
        hdrs.CACHE_CONTROL: "public, max-age=60",
        hdrs.VARY: vary(request, hdrs.ACCEPT_ENCODING),
    }
    return respond_encoded(
        request,
        request.app[TOOLS_PAGES].listing(wheel, origin_of(request)),
        content_type=HTML,
        caching=listing_caching,
        last_modified=None if wheel is None else wheel.modified,
    )


async def tool_file(request: web.Request) -> web.Response:
    wheel = request.app[TOOLS].wheel
    name = request.match_info["file"]
    caching: dict[str, str] = {hdrs.CACHE_CONTROL: TOOLS_CACHING}
    if wheel is not None and name == wheel.name:
        rep = Representation(strong_etag(wheel.sha256), len(wheel.data), wheel.modified)
        content: dict[str, str] = {
            hdrs.CONTENT_TYPE: WHEEL_CONTENT_TYPE,
            hdrs.CONTENT_DISPOSITION: attachment(name),
        }
        return respond_bytes(request, wheel.data, rep, caching=caching, content=content)
    if wheel is not None and name == wheel.name + CHECKSUM_SUFFIX:
        body = checksum_line(wheel.name, wheel.sha256).encode("ascii")
        rep = Representation(strong_etag(f"{wheel.sha256}.sha256"), len(body), wheel.modified)
        checksum_content: dict[str, str] = {
            hdrs.CONTENT_TYPE: CHECKSUM_CONTENT_TYPE,
            hdrs.CONTENT_DISPOSITION: attachment(name),
        }
        return respond_bytes(request, body, rep, caching=caching, content=checksum_content)
    raise NotFound("no such tool file")
