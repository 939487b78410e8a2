"""Which public origin (``https://host[:port]``) the absolute addresses written for people and
tools outside the API use: the lists, the feed, torrent web seeds, the page's examples.

Pure: the caller passes the request's facts. ``PUBLIC_BASE_URL`` wins; without it the origin is
the request's own, and ``X-Forwarded-Proto``/``X-Forwarded-Host`` count only when the peer is one
of ``TRUSTED_PROXIES`` (anyone else could make the service write their host into its lists)."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Sequence
from dataclasses import dataclass

IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

# A host as RFC 3986 allows it in an authority, without user info: a name or IPv4 address, or
# an IPv6 literal in brackets, and an optional port. Anything else is not written into a URL.
_HOST = re.compile(
    r"(?:[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?"
)
_SCHEMES = ("http", "https")


@dataclass(frozen=True, slots=True)
class RequestOrigin:
    """What a request says about where it was sent."""

    scheme: str
    """``http`` or ``https`` as the server saw the connection."""
    host: str | None
    """The ``Host`` header."""
    peer: str | None
    """The connection's peer address (the proxy's, behind one)."""
    forwarded_proto: str | None = None
    forwarded_host: str | None = None


def _first(value: str | None) -> str | None:
    """The first hop of a comma-separated ``X-Forwarded-*`` list: the one the client spoke to."""
    if value is None:
        return None
    first = value.split(",", 1)[0].strip()
    return first or None


def is_trusted(peer: str | None, trusted: Sequence[IPNetwork]) -> bool:
    if peer is None or not trusted:
        return False
    try:
        address = ipaddress.ip_address(peer.split("%", 1)[0])  # drop an IPv6 zone
    except ValueError:
        return False  # a unix socket's peer, or nothing an IP network can contain
    return any(address in network for network in trusted)


def public_origin(
    configured: str | None, trusted: Sequence[IPNetwork], request: RequestOrigin
) -> str:
    """``scheme://host`` without a trailing slash.

    A forwarded value that is not a valid scheme or host is ignored (the request's own is
    used), and a request without a usable ``Host`` gets ``localhost``: a list is still
    served, and the address is at worst as wrong as the request was."""
    if configured is not None:
        return configured.rstrip("/")
    scheme = request.scheme if request.scheme in _SCHEMES else "http"
    host = request.host if request.host and _HOST.fullmatch(request.host) else None
    if is_trusted(request.peer, trusted):
        proto = (_first(request.forwarded_proto) or "").lower()
        if proto in _SCHEMES:
            scheme = proto
        forwarded = _first(request.forwarded_host)
        if forwarded and _HOST.fullmatch(forwarded):
            host = forwarded
    return f"{scheme}://{(host or 'localhost').lower()}"


def client_address(
    peer: str | None, forwarded_for: str | None, trusted: Sequence[IPNetwork]
) -> str:
    """The client a request comes from: the peer, or, when the peer is one of
    ``TRUSTED_PROXIES``, the nearest address in ``X-Forwarded-For`` that is not a trusted proxy
    (read from the right: each proxy appends the address it saw, and only the trusted ones'
    entries can be believed; anything left of them is what the client claimed)."""
    address = peer or "unknown"
    if forwarded_for is None or not is_trusted(peer, trusted):
        return address
    for hop in reversed([h.strip() for h in forwarded_for.split(",")]):
        try:
            ipaddress.ip_address(hop.split("%", 1)[0])
        except ValueError:
            return address  # a malformed entry: believe nothing further left
        address = hop
        if not is_trusted(hop, trusted):
            return hop
    return address


def parse_networks(text: str) -> tuple[IPNetwork, ...]:
    """``10.0.0.1, 192.168.0.0/16 ::1``: addresses and networks, split on commas or spaces.
    Raises ValueError naming the first bad item."""
    networks: list[IPNetwork] = []
    for item in re.split(r"[\s,]+", text.strip()):
        if not item:
            continue
        try:
            networks.append(ipaddress.ip_network(item, strict=False))
        except ValueError:
            raise ValueError(f"{item!r} is not an IP address or CIDR network") from None
    return tuple(networks)
