"""The request's side of ``gomoku_archive.http.origin``: the origin absolute addresses use."""

from __future__ import annotations

from aiohttp import hdrs, web

from gomoku_archive.http.origin import RequestOrigin, client_address, public_origin
from gomoku_archive.web.keys import SETTINGS

ORIGIN_VARY = "Host, X-Forwarded-Host, X-Forwarded-Proto"
"""What a body with absolute addresses depends on when PUBLIC_BASE_URL is unset."""


def origin_of(request: web.Request) -> str:
    settings = request.app[SETTINGS]
    return public_origin(
        settings.public_base_url,
        settings.trusted_proxies,
        RequestOrigin(
            scheme=request.scheme,
            host=request.headers.get(hdrs.HOST),
            peer=request.remote,
            forwarded_proto=request.headers.get(hdrs.X_FORWARDED_PROTO),
            forwarded_host=request.headers.get(hdrs.X_FORWARDED_HOST),
        ),
    )


def vary(request: web.Request, *others: str) -> str:
    """``Vary`` of a body with absolute addresses: the origin's headers count unless fixed."""
    if request.app[SETTINGS].public_base_url is None:
        return ", ".join((*others, ORIGIN_VARY))
    return ", ".join(others)


def client_of(request: web.Request) -> str:
    """The client's address: the peer's, or behind a trusted proxy the forwarded one."""
    settings = request.app[SETTINGS]
    return client_address(
        request.remote, request.headers.get(hdrs.X_FORWARDED_FOR), settings.trusted_proxies
    )
