from aiohttp import web
from aiohttp.test_utils import make_mocked_request
from multidict import CIMultiDict

from gomoku_archive.web.ops import auth

TOKEN = "s3cret-operator-token"


def request(headers: dict[str, str] | None = None, cookie: str | None = None) -> web.Request:
    h = CIMultiDict(headers or {})
    h.setdefault("Host", "archive.example")
    if cookie is not None:
        h["Cookie"] = f"{auth.SESSION_COOKIE}={cookie}"
    return make_mocked_request("POST", "/ops/rebuild", headers=h)


def test_bearer_token() -> None:
    assert auth.authenticate(request({"Authorization": f"Bearer {TOKEN}"}), TOKEN) == auth.Operator(
        "bearer"
    )
    assert auth.authenticate(request({"Authorization": "Bearer nope"}), TOKEN) == "wrong_token"
    assert auth.authenticate(request({"Authorization": f"Basic {TOKEN}"}), TOKEN) == "missing"
    assert auth.authenticate(request(), TOKEN) == "missing"


def test_a_wrong_bearer_is_not_rescued_by_a_cookie() -> None:
    session = auth.new_session(TOKEN)
    req = request({"Authorization": "Bearer nope"}, cookie=session)
    assert auth.authenticate(req, TOKEN) == "wrong_token"


def test_sessions() -> None:
    session = auth.new_session(TOKEN, now=1_000_000)
    assert TOKEN not in session
    operator = auth.check_session(TOKEN, session, now=1_000_000 + 3600)
    assert isinstance(operator, auth.Operator)
    assert operator.via == "session"
    assert auth.check_session(TOKEN, session, now=1_000_000 + auth.SESSION_SECONDS + 1) == (
        "expired_session"
    )
    # A new token ends every session.
    assert auth.check_session("another-token", session, now=1_000_000) == "bad_session"
    issued, nonce, mac = session.split(".")[1:]
    assert auth.check_session(TOKEN, f"v1.{int(issued) + 1}.{nonce}.{mac}") == "bad_session"
    for broken in ("", "v1", "v2.1.a.b", "v1.x.a.b", "v1.1.a.b.c"):
        assert auth.check_session(TOKEN, broken) == "bad_session"


def test_sessions_are_unique_and_csrf_tokens_are_per_session() -> None:
    one = auth.check_session(TOKEN, auth.new_session(TOKEN))
    two = auth.check_session(TOKEN, auth.new_session(TOKEN))
    assert isinstance(one, auth.Operator)
    assert isinstance(two, auth.Operator)
    assert one.nonce != two.nonce
    csrf = auth.csrf_token(TOKEN, one)
    assert auth.csrf_ok(TOKEN, one, csrf)
    assert not auth.csrf_ok(TOKEN, two, csrf)
    assert not auth.csrf_ok(TOKEN, one, None)
    assert not auth.csrf_ok(TOKEN, one, "")
    assert auth.csrf_ok(TOKEN, auth.Operator("bearer"), None)


def test_cross_site_signals() -> None:
    assert auth.cross_site_reason(request()) is None
    assert auth.cross_site_reason(request({"Sec-Fetch-Site": "same-origin"})) is None
    assert auth.cross_site_reason(request({"Origin": "https://archive.example"})) is None
    assert auth.cross_site_reason(request({"Origin": "http://ARCHIVE.example"})) is None
    assert auth.cross_site_reason(request({"Sec-Fetch-Site": "cross-site"})) is not None
    assert auth.cross_site_reason(request({"Sec-Fetch-Site": "same-site"})) is not None
    assert auth.cross_site_reason(request({"Origin": "https://evil.example"})) is not None
    assert auth.cross_site_reason(request({"Origin": "null"})) is not None
    assert auth.cross_site_reason(request({"Origin": "https://archive.example.evil.example"}))


def test_flash_messages_are_signed() -> None:
    value = auth.flash_value(TOKEN, "ok", "Rebuild of 2026-08 queued as export:2026-08:force:x.")
    assert auth.read_flash(TOKEN, value) == (
        "ok",
        "Rebuild of 2026-08 queued as export:2026-08:force:x.",
    )
    assert auth.read_flash("other", value) is None
    payload, mac = value.rsplit(".", 1)
    assert auth.read_flash(TOKEN, payload + "x." + mac) is None
    assert auth.read_flash(TOKEN, None) is None
    assert auth.read_flash(TOKEN, "garbage") is None


def test_token_comparison_ignores_surrounding_blanks() -> None:
    assert auth.token_matches(TOKEN, f" {TOKEN}\n")
    assert not auth.token_matches(TOKEN, TOKEN[:-1])
    assert not auth.token_matches(TOKEN, "")


def test_credentials_that_are_not_ascii_are_wrong_not_errors() -> None:
    """aiohttp gives header bytes that are not UTF-8 as lone surrogates (surrogateescape)."""
    for value in ("\udcff\udcfe-not-utf-8", "tést-ünicode", TOKEN + "\udce9"):
        assert not auth.same_secret(value, TOKEN)  # a bearer's check (raw bytes: integration)
        assert auth.check_session(TOKEN, f"v1.1.abc.{value}") == "bad_session"
        assert not auth.token_matches(TOKEN, value)
        assert auth.read_flash(TOKEN, f"e30.{value}") is None
        session = auth.check_session(TOKEN, auth.new_session(TOKEN))
        assert isinstance(session, auth.Operator)
        assert not auth.csrf_ok(TOKEN, session, value)
    assert auth.same_secret(TOKEN, TOKEN)
