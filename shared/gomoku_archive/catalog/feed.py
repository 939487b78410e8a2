"""The Atom 1.0 feed (RFC 4287) of publications, from the manifest document.

Pure. One entry per file ever published and still listed (each month's current file and its
``previousFiles``), plus one for each time a month was published without games (its current
listing, or one of its ``previousZeroGameListings``). An entry describes its own
publication only, so it never changes once written: its id is a ``tag:`` URI (RFC 4151) from
the file's SHA-256, and a rebuild is a new entry that names the file it replaces and what
changed in the counts. A rebuild that gives back an earlier file's bytes publishes that file
again (its URL and ``firstPublishedAt`` never change; ``publishedAt`` becomes the restore's
time): that restore is an entry of its own, dated when it happened, beside the file's first
publication. A file built by a rebuild that was given a reason (``rebuildReason``) says it in
its entry; a restore's own reason is for operators only (the restored file keeps the reason it
was first built for, so its first entry never changes)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

ATOM_NS = "http://www.w3.org/2005/Atom"
TAG_AUTHORITY = "tag:gomokuparty.com,2026:"
"""Ids must not move with the host a request named (RFC 4287 §4.2.6): one fixed authority."""
FEED_ID = TAG_AUTHORITY + "database"
FEED_PATH = "/api/v1/database/feed.atom"
PAGE_PATH = "/database/"
EMPTY_FEED_UPDATED = "2026-09-01T00:00:00Z"
"""``updated`` is required; before anything is published it is the first month's closing."""


@dataclass(frozen=True, slots=True)
class Publication:
    """One file (or a zero-game month) as it was published."""

    month: str
    file: str | None
    sha256: str | None
    bytes: int
    games: int
    candidate_games: int
    excluded_games: int
    published_at: str
    download_url: str | None
    announced_at: str = ""
    """When this entry's event happened: ``published_at``, or the moment of a restore."""
    restored: bool = False
    later_listing: bool = False
    """A zero-game listing after the month's first one (its id then names its time)."""
    rebuild_reason: str | None = None
    """Why the rebuild that built this file (or listing) was asked."""


def publications(document: Mapping[str, Any]) -> list[tuple[Publication, Publication | None]]:
    """Every publication with the one it replaced in its month (None for a month's first),
    newest first."""
    ordered: list[tuple[tuple[str, str, int], Publication, Publication | None]] = []
    for month in document["months"]:
        events = _month_events(month)
        for index, (p, replaced) in enumerate(zip(events, [None, *events[:-1]], strict=True)):
            ordered.append(((p.announced_at, p.month, index), p, replaced))
    ordered.sort(key=lambda item: item[0], reverse=True)
    return [(p, replaced) for _, p, replaced in ordered]


def _month_events(month: Mapping[str, Any]) -> list[Publication]:
    """The month's publications, oldest first: each file's first publication, and a restore
    wherever a file became current again after a newer one."""
    # Ordered by supersededAt, with the current file (or listing) last, the superseded files and
    # zero-game listings are in the order in which they were last made current (a file's
    # entry is dated by its first publication, firstPublishedAt).
    superseded = [
        (_publication(month["month"], f), str(f["supersededAt"])) for f in month["previousFiles"]
    ]
    superseded += [
        (_listing(month["month"], listing), str(listing["supersededAt"]))
        for listing in month.get("previousZeroGameListings", ())
    ]
    made_current = sorted(
        superseded, key=lambda item: (item[1], item[0].published_at, item[0].file or "")
    )
    made_current.append((_publication(month["month"], month), ""))
    listings = sorted(p.published_at for p, _ in made_current if p.sha256 is None)
    made_current = [
        (replace(p, later_listing=p.sha256 is None and p.published_at != listings[0]), at)
        for p, at in made_current
    ]
    events: list[tuple[str, int, Publication]] = []
    for index, (p, _) in enumerate(made_current):
        events.append((p.published_at, index, replace(p, announced_at=p.published_at)))
        before = made_current[index - 1] if index else None
        if before is not None and p.published_at < before[0].published_at:
            # Published before the file it followed: restored when that one was superseded.
            at = before[1]
            events.append((at, index, replace(p, announced_at=at, restored=True)))
    events.sort(key=lambda event: event[:2])
    return [p for _, _, p in events]


def _publication(month: str, file: Mapping[str, Any]) -> Publication:
    """A month's current file (the month's own entry) or one of its ``previousFiles``: both
    carry the same keys."""
    return Publication(
        month=month,
        file=file["file"],
        sha256=file["sha256"],
        bytes=file["bytes"],
        games=file["games"],
        candidate_games=file["candidateGames"],
        excluded_games=file["excludedGames"],
        published_at=file.get("firstPublishedAt", file["publishedAt"]),
        download_url=file["downloadUrl"],
        rebuild_reason=file.get("rebuildReason"),
    )


def _listing(month: str, listing: Mapping[str, Any]) -> Publication:
    """One of the month's ``previousZeroGameListings``."""
    return Publication(
        month=month,
        file=None,
        sha256=None,
        bytes=0,
        games=0,
        candidate_games=listing["candidateGames"],
        excluded_games=listing["excludedGames"],
        published_at=listing["publishedAt"],
        download_url=None,
        rebuild_reason=listing.get("rebuildReason"),
    )


def entry_id(p: Publication) -> str:
    """The entry's id: from the file's SHA-256, or for a zero-game listing from the month (the
    month's first such listing keeps ``month:M:no-games`` once it is superseded, so its entry
    never changes; a later one adds its time)."""
    if p.sha256 is not None:
        what = f"archive:{p.sha256}"
    elif p.later_listing:
        what = f"month:{p.month}:no-games:{p.published_at}"
    else:
        what = f"month:{p.month}:no-games"
    return (
        f"{TAG_AUTHORITY}{what}:restored:{p.announced_at}" if p.restored else TAG_AUTHORITY + what
    )


def _change(label: str, before: int, after: int) -> str:
    delta = after - before
    return f"{label} {before:,} → {after:,} ({delta:+,})" if delta else f"{label} {after:,} (same)"


def games(count: int) -> str:
    """``1 game``, ``2 games``, ``1,234 games``."""
    return f"{count:,} game" + ("" if count == 1 else "s")


def describe(p: Publication, replaced: Publication | None) -> tuple[str, str]:
    """The entry's title and text."""
    counts = f"{games(p.games)} ({p.candidate_games:,} candidates, {p.excluded_games:,} excluded)"
    if p.file is None:
        body = f"{p.month} has no games in scope: {counts}. There is no file to download."
    else:
        body = f"{p.file}: {counts}, {p.bytes:,} bytes, sha256 {p.sha256}."
    why = f" Reason for the rebuild: {p.rebuild_reason}" if p.rebuild_reason else ""
    if replaced is None:
        return f"{p.month}: {games(p.games)}", body + why
    old = replaced.file or "the month's zero-game listing"
    changes = ", ".join(
        (
            _change("games", replaced.games, p.games),
            _change("candidates", replaced.candidate_games, p.candidate_games),
            _change("excluded", replaced.excluded_games, p.excluded_games),
        )
    )
    kept = " (still downloadable at its URL)" if replaced.file else ""
    if p.restored:
        return (
            f"{p.month} restored: {games(p.games)}",
            f"{body} A rebuild gave back these bytes, first published {p.published_at}, so "
            f"this file is the month's current file again. It replaces {old}{kept}: {changes}.",
        )
    return (
        f"{p.month} rebuilt: {games(p.games)}",
        f"{body} It replaces {old}{kept}: {changes}.{why}",
    )


def _text(parent: ET.Element, tag: str, text: str, **attrs: str) -> ET.Element:
    element = ET.SubElement(parent, tag, attrs)
    element.text = text
    return element


def build_feed(document: Mapping[str, Any], origin: str) -> bytes:
    """The feed's bytes (UTF-8 XML); the same document and origin give the same bytes."""
    found = publications(document)
    feed = ET.Element("feed", {"xmlns": ATOM_NS})
    _text(feed, "id", FEED_ID)
    _text(feed, "title", "Gomoku Party database: monthly game archives")
    _text(feed, "subtitle", f"New and rebuilt archives of the {document['profile']} dataset")
    _text(feed, "updated", found[0][0].announced_at if found else EMPTY_FEED_UPDATED)
    author = ET.SubElement(feed, "author")
    _text(author, "name", "Gomoku Party")
    ET.SubElement(feed, "link", {"rel": "self", "href": origin + FEED_PATH})
    ET.SubElement(feed, "link", {"rel": "alternate", "href": origin + PAGE_PATH})
    _text(feed, "rights", f"{document['license']}: the dataset is in the public domain")
    for p, replaced in found:
        entry = ET.SubElement(feed, "entry")
        title, text = describe(p, replaced)
        _text(entry, "id", entry_id(p))
        _text(entry, "title", title)
        _text(entry, "published", p.announced_at)
        _text(entry, "updated", p.announced_at)
        # the month's row of the public page (its id is the month)
        ET.SubElement(entry, "link", {"rel": "alternate", "href": f"{origin}{PAGE_PATH}#{p.month}"})
        if p.download_url is not None:
            ET.SubElement(
                entry,
                "link",
                {
                    "rel": "enclosure",
                    "type": "application/gzip",
                    "length": str(p.bytes),
                    "href": origin + p.download_url,
                },
            )
        _text(entry, "summary", text)
    ET.indent(feed)
    body: bytes = ET.tostring(feed, encoding="utf-8", xml_declaration=True)
    return body + b"\n"
