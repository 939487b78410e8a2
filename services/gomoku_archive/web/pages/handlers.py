"""Handlers of the public pages: ``/database/`` (from the cached manifest, re-rendered only when
the manifest changes) and ``/database/profile`` (rendered once); and the HTML side of errors and
of ``/`` for browsers (``gomoku_archive.web.middleware`` decides when)."""

from __future__ import annotations

import functools
from http import HTTPStatus

from aiohttp import hdrs, web

from gomoku_archive.catalog.bulk_lists import current_files
from gomoku_archive.catalog.manifest import last_changed
from gomoku_archive.http.conditions import EntityTag
from gomoku_archive.http.negotiation import prefers_html
from gomoku_archive.web.keys import MANIFEST, TOOLS
from gomoku_archive.web.manifest_cache import Snapshot
from gomoku_archive.web.pages.database import render_database_page, render_year_page
from gomoku_archive.web.pages.favicon import favicon_ico
from gomoku_archive.web.pages.profile import PROFILE_REVISED, render_profile_page
from gomoku_archive.web.pages.templating import render
from gomoku_archive.web.request_origin import origin_of, vary
from gomoku_archive.web.server.encoded import Encoded, encode, respond_encoded

HTML = "text/html; charset=utf-8"
CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; base-uri 'none'; "
    "form-action 'none'; frame-ancestors 'none'"
)
"""No scripts at all: the pages work without JavaScript, so they may forbid it."""
_SECURITY: dict[str, str] = {"Content-Security-Policy": CSP}


class DatabasePage:
    """The last rendering and its gzip twin, keyed by the manifest's ETag; and the year pages
    of that manifest version."""

    def __init__(self) -> None:
        self._key: tuple[EntityTag, str, str | None] | None = None
        self._page = encode(b"")
        self._years_of: EntityTag | None = None
        self._years: dict[int, Encoded | None] = {}

    def for_snapshot(self, snapshot: Snapshot, origin: str, wheel: str | None = None) -> Encoded:
        """``origin``: where the page's example URLs point (one is kept: with PUBLIC_BASE_URL
        there is only one, and a page renders in a few milliseconds otherwise); ``wheel``: the
        tool's wheel this server carries."""
        if (snapshot.etag, origin, wheel) != self._key:
            self._page = encode(render_database_page(snapshot.document, origin, wheel))
            self._key = (snapshot.etag, origin, wheel)
        return self._page

    def year(self, snapshot: Snapshot, year: int) -> Encoded | None:
        """``/database/YYYY/``, None for a year without months (at most one entry per year of
        the manifest is kept: other years render to None, which is not kept)."""
        if snapshot.etag != self._years_of:
            self._years_of, self._years = snapshot.etag, {}
        if year not in self._years:
            page = render_year_page(snapshot.document, year)
            if page is None:
                return None
            self._years[year] = encode(page)
        return self._years[year]


DATABASE_PAGE = web.AppKey("database_page", DatabasePage)


class FilesIndex:
    """``/database/files/`` as rendered for one manifest version."""

    def __init__(self) -> None:
        self._of: EntityTag | None = None
        self._page = encode(b"")

    def for_snapshot(self, snapshot: Snapshot) -> Encoded:
        if snapshot.etag != self._of:
            files = list(current_files(snapshot.document))
            self._page = encode(render("files.html", files=files).encode("utf-8"))
            self._of = snapshot.etag
        return self._page


FILES_INDEX = web.AppKey("files_index", FilesIndex)


async def files_index(request: web.Request) -> web.Response:
    """The mirrors' index of every current file (relative links, Last-Modified)."""
    snapshot = request.app[MANIFEST].snapshot
    return _page_response(request, request.app[FILES_INDEX].for_snapshot(snapshot), snapshot)


async def database_page(request: web.Request) -> web.Response:
    snapshot = request.app[MANIFEST].snapshot
    wheel = request.app[TOOLS].wheel
    page = request.app[DATABASE_PAGE].for_snapshot(
        snapshot, origin_of(request), None if wheel is None else wheel.name
    )
    # The examples' URLs follow the request's origin.
    return _page_response(request, page, snapshot, varies=vary(request))


async def year_page(request: web.Request) -> web.Response:
    """``/database/YYYY/``: a year's months with their statistics; 404 for a year without."""
    snapshot = request.app[MANIFEST].snapshot
    page = request.app[DATABASE_PAGE].year(snapshot, int(request.match_info["year"]))
    if page is None:
        raise web.HTTPNotFound()
    return _page_response(request, page, snapshot)


def _page_response(
    request: web.Request, page: Encoded, snapshot: Snapshot, *, varies: str = ""
) -> web.Response:
    """A page rendered from the manifest ``snapshot``: a minute in caches, changed when the
    manifest's newest publication changed."""
    caching: dict[str, str] = {
        hdrs.CACHE_CONTROL: "public, max-age=60",
        hdrs.VARY: f"{varies}, Accept-Encoding" if varies else "Accept-Encoding",
    }
    return respond_encoded(
        request,
        page,
        content_type=HTML,
        caching=caching,
        headers=_SECURITY,
        last_modified=last_changed(snapshot.document),
    )


async def to_year_page(request: web.Request) -> web.Response:
    return web.Response(
        status=301, headers={hdrs.LOCATION: f"/database/{request.match_info['year']}/"}
    )


@functools.cache
def _profile_page() -> Encoded:
    """The profile page and its gzip twin: built from constants, so once per process."""
    return encode(render_profile_page())


async def profile_page(request: web.Request) -> web.Response:
    caching: dict[str, str] = {
        hdrs.CACHE_CONTROL: "public, max-age=3600",
        hdrs.VARY: "Accept-Encoding",
    }
    return respond_encoded(
        request,
        _profile_page(),
        content_type=HTML,
        caching=caching,
        headers=_SECURITY,
        last_modified=PROFILE_REVISED,
    )


ROBOTS = b"""# The public pages and the archives may be crawled; the operators' area may not.
User-agent: *
Allow: /database/
Allow: /api/v1/database/
Disallow: /ops/
"""


@functools.cache
def _robots() -> Encoded:
    return encode(ROBOTS)


async def robots_txt(request: web.Request) -> web.Response:
    caching: dict[str, str] = {
        hdrs.CACHE_CONTROL: "public, max-age=86400",
        hdrs.VARY: "Accept-Encoding",
    }
    return respond_encoded(
        request, _robots(), content_type="text/plain; charset=utf-8", caching=caching
    )


async def favicon(request: web.Request) -> web.Response:
    """``/favicon.ico``: a Gomoku board corner with a black and a white stone (generated)."""
    caching: dict[str, str] = {
        hdrs.CACHE_CONTROL: "public, max-age=604800",
        hdrs.VARY: "Accept-Encoding",
    }
    return respond_encoded(
        request, _favicon(), content_type="image/vnd.microsoft.icon", caching=caching
    )


@functools.cache
def _favicon() -> Encoded:
    return encode(favicon_ico())


async def to_database_page(request: web.Request) -> web.Response:
    """``/database`` → ``/database/``, the address the archives' SO property names."""
    return web.Response(status=301, headers={hdrs.LOCATION: "/database/"})


@functools.lru_cache(maxsize=64)
def error_page(status: int, code: str, message: str) -> bytes:
    """An error as a small page in the public layout (errors' messages are a small fixed set,
    so the renderings are kept)."""
    phrase = HTTPStatus(status).phrase
    html = render("error.html", status=status, phrase=phrase, code=code, message=message)
    return html.encode("utf-8")


ERROR_PAGE_HEADERS: dict[str, str] = {hdrs.CONTENT_TYPE: HTML, "Content-Security-Policy": CSP}


async def root(request: web.Request) -> web.Response:
    """``/``: nothing is served here; a browser (only) is sent to the database page, any other
    client gets the JSON 404 (the middleware writes it, with ``Vary: Accept``)."""
    if prefers_html(", ".join(request.headers.getall(hdrs.ACCEPT, [])) or None):
        return home_for_browsers()
    raise web.HTTPNotFound()


def home_for_browsers() -> web.Response:
    """``/`` asked for by a browser: the database page. 302, not 301 or 308: the answer depends
    on ``Accept`` (API clients and curl still get 404), so it must not be cached as permanent."""
    return web.Response(status=302, headers={hdrs.LOCATION: "/database/", hdrs.VARY: "Accept"})
