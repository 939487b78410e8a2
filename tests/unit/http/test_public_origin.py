import ipaddress

import pytest

from gomoku_archive.http.origin import RequestOrigin, is_trusted, parse_networks, public_origin

PROXIES = parse_networks("10.0.0.0/8, ::1 192.168.1.7")


@pytest.mark.parametrize(
    ("configured", "request_", "expected"),
    [
        # PUBLIC_BASE_URL wins over everything the request says.
        (
            "https://gomokuparty.com",
            RequestOrigin("http", "evil.example", "10.0.0.1", "http", "evil.example"),
            "https://gomokuparty.com",
        ),
        ("https://gomokuparty.com/", RequestOrigin("http", "x", None), "https://gomokuparty.com"),
        # Unset: the request's own origin.
        (None, RequestOrigin("http", "127.0.0.1:8080", "127.0.0.1"), "http://127.0.0.1:8080"),
        (None, RequestOrigin("https", "Archive.Example", "203.0.113.9"), "https://archive.example"),
        # Forwarded headers from an untrusted peer are ignored.
        (
            None,
            RequestOrigin("http", "a.example", "203.0.113.9", "https", "evil.example"),
            "http://a.example",
        ),
        # From a trusted proxy they count; the first hop of a list is the client's.
        (
            None,
            RequestOrigin("http", "backend:8080", "10.1.2.3", "https", "gomokuparty.com"),
            "https://gomokuparty.com",
        ),
        (
            None,
            RequestOrigin("http", "b", "10.1.2.3", "https, http", "pub.example, inner"),
            "https://pub.example",
        ),
        (None, RequestOrigin("http", "b", "::1", "HTTPS", None), "https://b"),
        (
            None,
            RequestOrigin("http", "b", "192.168.1.7", None, "[2001:db8::1]:8443"),
            "http://[2001:db8::1]:8443",
        ),
        # Trusted but nonsense: the request's own values stay.
        (None, RequestOrigin("http", "b", "10.0.0.1", "gopher", "x/y@z"), "http://b"),
        (None, RequestOrigin("http", "b", "10.0.0.1", "", " , "), "http://b"),
        # No usable Host at all.
        (None, RequestOrigin("http", None, "127.0.0.1"), "http://localhost"),
        (None, RequestOrigin("http", "a b", "127.0.0.1"), "http://localhost"),
        (None, RequestOrigin("ftp", "a", "127.0.0.1"), "http://a"),
    ],
)
def test_public_origin(configured: str | None, request_: RequestOrigin, expected: str) -> None:
    assert public_origin(configured, PROXIES, request_) == expected


@pytest.mark.parametrize(
    ("peer", "trusted"),
    [
        ("10.9.9.9", True),
        ("11.0.0.1", False),
        ("::1", True),
        ("fe80::1%eth0", False),
        ("192.168.1.7", True),
        ("192.168.1.8", False),
        (None, False),
        ("/run/sock", False),
    ],
)
def test_is_trusted(peer: str | None, trusted: bool) -> None:
    assert is_trusted(peer, PROXIES) is trusted


def test_nobody_is_trusted_by_default() -> None:
    assert not is_trusted("127.0.0.1", ())


def test_parse_networks() -> None:
    assert parse_networks("") == ()
    assert parse_networks(" 10.0.0.1 ,2001:db8::/32") == (
        ipaddress.ip_network("10.0.0.1/32"),
        ipaddress.ip_network("2001:db8::/32"),
    )
    assert parse_networks("10.0.0.1/8") == (ipaddress.ip_network("10.0.0.0/8"),)
    with pytest.raises(ValueError, match=r"'10\.0\.0\.300'"):
        parse_networks("10.0.0.1, 10.0.0.300")
