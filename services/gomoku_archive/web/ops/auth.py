"""Who may use ``/ops/``: the holder of the operator token, either as ``Authorization: Bearer``
(scripts) or through a browser session cookie set by the login form.

The cookie never holds the token: it is ``v1.<issued>.<nonce>.<HMAC(token, issued.nonce)>``, so
changing ``OPS_TOKEN`` ends every session, and it is HttpOnly, SameSite=Strict, scoped to
``/ops/`` and Secure on HTTPS. Forms carry a CSRF token, HMAC(token, nonce): a page from another
site can neither read it nor make the browser send the cookie (SameSite), and the ``Origin`` and
``Sec-Fetch-Site`` headers are checked when the browser sends them. Bearer clients send no
ambient credentials, so they need no CSRF token.

Every comparison of secrets uses ``hmac.compare_digest``, on bytes (``same_secret``): whatever
bytes a client sends, a credential that is not the right one is a wrong one, never an error.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import time
from dataclasses import dataclass
from typing import Literal
from urllib.parse import urlsplit

from aiohttp import hdrs, web

SESSION_COOKIE = "gomoku_ops_session"
FLASH_COOKIE = "gomoku_ops_flash"
COOKIE_PATH = "/ops/"
SESSION_SECONDS = 12 * 3600
"""A night shift; log in again after that."""

AuthFailure = Literal["missing", "wrong_token", "bad_session", "expired_session"]


@dataclass(frozen=True, slots=True)
class Operator:
    """An authenticated request: by bearer token, or by session (whose nonce keys CSRF)."""

    via: Literal["bearer", "session"]
    nonce: str | None = None


def same_secret(submitted: str, expected: str) -> bool:
    """Whether ``submitted`` is ``expected``, in constant time. aiohttp hands header bytes that
    are not UTF-8 over as lone surrogates, which neither ``str.encode()`` nor ``compare_digest``
    on ``str`` (ASCII only) accepts; ``surrogateescape`` gives back the bytes the client sent,
    which then simply differ from the expected ones."""
    return hmac.compare_digest(
        submitted.encode("utf-8", "surrogateescape"), expected.encode("utf-8", "surrogateescape")
    )


def _mac(token: str, purpose: str, message: str) -> str:
    return hmac.new(token.encode(), f"{purpose}:{message}".encode(), hashlib.sha256).hexdigest()


def new_session(token: str, *, now: float | None = None) -> str:
    issued = int(time.time() if now is None else now)
    nonce = secrets.token_hex(16)
    return f"v1.{issued}.{nonce}.{_mac(token, 'session', f'{issued}.{nonce}')}"


def check_session(token: str, value: str, *, now: float | None = None) -> Operator | AuthFailure:
    parts = value.split(".")
    if len(parts) != 4 or parts[0] != "v1" or not parts[1].isdigit():
        return "bad_session"
    _, issued, nonce, mac = parts
    if not same_secret(mac, _mac(token, "session", f"{issued}.{nonce}")):
        return "bad_session"
    age = (time.time() if now is None else now) - int(issued)
    if not -60 <= age <= SESSION_SECONDS:
        return "expired_session"
    return Operator("session", nonce)


def csrf_token(token: str, operator: Operator) -> str:
    """The form token of a session (empty for bearer clients, which need none)."""
    return _mac(token, "csrf", operator.nonce) if operator.nonce else ""


def csrf_ok(token: str, operator: Operator, submitted: str | None) -> bool:
    if operator.via == "bearer":
        return True
    return submitted is not None and same_secret(submitted, csrf_token(token, operator))


def bearer_of(request: web.Request) -> str | None:
    header = request.headers.get(hdrs.AUTHORIZATION, "")
    scheme, _, credentials = header.partition(" ")
    if scheme.lower() != "bearer" or not credentials.strip():
        return None
    return credentials.strip()


def authenticate(request: web.Request, token: str) -> Operator | AuthFailure:
    """The operator behind ``request``, or why there is none. A bearer header, when present,
    decides alone (a wrong one is not rescued by a cookie)."""
    bearer = bearer_of(request)
    if bearer is not None:
        if same_secret(bearer, token):
            return Operator("bearer")
        return "wrong_token"
    cookie = request.cookies.get(SESSION_COOKIE)
    if cookie is None:
        return "missing"
    return check_session(token, cookie)


def token_matches(token: str, submitted: str) -> bool:
    return same_secret(submitted.strip(), token)


def cross_site_reason(request: web.Request) -> str | None:
    """Why a browser's POST looks cross-site, or None. Browsers that send neither header are
    still covered by the SameSite cookie and the CSRF token."""
    site = request.headers.get("Sec-Fetch-Site")
    if site is not None and site not in ("same-origin", "none"):
        return f"Sec-Fetch-Site is {site}"
    origin = request.headers.get(hdrs.ORIGIN)
    # Host only: behind a TLS-terminating proxy the scheme we see is not the browser's.
    if origin is not None and (
        origin == "null" or urlsplit(origin).netloc.lower() != request.host.lower()
    ):
        return f"Origin {origin} is not this site"
    return None


def set_session_cookie(response: web.StreamResponse, request: web.Request, value: str) -> None:
    response.set_cookie(
        SESSION_COOKIE,
        value,
        max_age=SESSION_SECONDS,
        path=COOKIE_PATH,
        httponly=True,
        secure=request.secure,
        samesite="Strict",
    )


def clear_session_cookie(response: web.StreamResponse) -> None:
    response.del_cookie(SESSION_COOKIE, path=COOKIE_PATH)


# --- flash messages: one line shown once after a redirect, signed so no one else can plant one --


def flash_value(token: str, kind: str, text: str) -> str:
    payload = base64.urlsafe_b64encode(json.dumps([kind, text]).encode()).decode().rstrip("=")
    return f"{payload}.{_mac(token, 'flash', payload)}"


def read_flash(token: str, value: str | None) -> tuple[str, str] | None:
    if not value or "." not in value:
        return None
    payload, mac = value.rsplit(".", 1)
    if not same_secret(mac, _mac(token, "flash", payload)):
        return None
    try:
        kind, text = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    except (ValueError, TypeError):
        return None
    return str(kind), str(text)


def set_flash_cookie(
    response: web.StreamResponse, request: web.Request, token: str, kind: str, text: str
) -> None:
    response.set_cookie(
        FLASH_COOKIE,
        flash_value(token, kind, text),
        max_age=60,
        path=COOKIE_PATH,
        httponly=True,
        secure=request.secure,
        samesite="Strict",
    )
