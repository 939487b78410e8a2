"""What ``gomoku-archive sync`` does to a folder, decided without I/O: the manifest read and
checked (a document that is not this service's manifest is refused, and no name in it can
point outside the folder), and for each month of the chosen range whether its file is new,
rebuilt, unchanged or removed, and which local files it supersedes.

A folder holds each month's current file under its own name; the files a rebuild superseded
go to ``superseded/`` (or are deleted), so reading ``*.sgf.gz`` counts every game once. With
``--parquet`` the months' Parquet companions are kept the same way, planned apart
(``read_companions``, ``local_companions``): ``*.parquet`` then holds every game once too."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

from gomoku_archive.companion.file_names import COMPANION_NAME_RE
from gomoku_archive.errors import ArchiveError, InvalidMonth
from gomoku_archive.profile.months import Month
from gomoku_archive.profile.names import ARCHIVE_NAME_RE, CHECKSUM_SUFFIX
from gomoku_archive.profile.vocabulary import PROFILE_ID

MANIFEST_SCHEMA_VERSION = 1
SUPERSEDED_DIR = "superseded"
"""Where the files of rebuilt months go, inside the synced folder."""
REJECTED_DIR = "rejected"
"""Where a download whose SHA-256 is not the manifest's is kept aside, never under its name."""
PART_SUFFIX = ".part"
"""A download in progress: renamed to its final name only once its SHA-256 checks out."""
_SHA256 = re.compile(r"[0-9a-f]{64}")


class NotAManifest(ArchiveError):
    """The document at the manifest's address is not this service's manifest."""

    exit_code = 2


class Status(StrEnum):
    NEW = "new"
    REBUILT = "rebuilt"
    UNCHANGED = "unchanged"
    REMOVED = "removed"
    EMPTY = "no games"


@dataclass(frozen=True, slots=True)
class RemoteFile:
    """A month's current file as the manifest lists it."""

    month: Month
    name: str
    sha256: str
    size: int
    url: str
    """Its download address, as the manifest writes it (a path on the service)."""


@dataclass(frozen=True, slots=True)
class Listing:
    """Every month of the manifest: its current file, None for a month without games."""

    months: Mapping[Month, RemoteFile | None]


def read_manifest(document: object) -> Listing:
    """The manifest's months; raises ``NotAManifest`` for anything else (an HTML page, another
    service's JSON, a name that is not an archive name)."""
    if not isinstance(document, dict):
        raise NotAManifest("it is not a JSON object")
    if document.get("profile") != PROFILE_ID:
        raise NotAManifest(f"its profile is {document.get('profile')!r}, not {PROFILE_ID!r}")
    if document.get("schemaVersion") != MANIFEST_SCHEMA_VERSION:
        raise NotAManifest(f"its schemaVersion is {document.get('schemaVersion')!r}, not 1")
    entries = document.get("months")
    if not isinstance(entries, list):
        raise NotAManifest("it has no list of months")
    months: dict[Month, RemoteFile | None] = {}
    for entry in entries:
        month, file = _month_entry(entry)
        if month in months:
            raise NotAManifest(f"it lists {month} twice")
        months[month] = file
    return Listing(months)


def _month_entry(entry: object) -> tuple[Month, RemoteFile | None]:
    if not isinstance(entry, dict):
        raise NotAManifest("a month is not a JSON object")
    try:
        month = Month.parse(str(entry.get("month")))
    except InvalidMonth:
        raise NotAManifest(f"{entry.get('month')!r} is not a month") from None
    name = entry.get("file")
    if name is None:
        return month, None
    match = ARCHIVE_NAME_RE.fullmatch(name) if isinstance(name, str) else None
    # The name becomes a path in the folder: only a plain archive name of its own month.
    if match is None or f"{match.group(1)}-{match.group(2)}" != str(month):
        raise NotAManifest(f"{name!r} is not an archive name of {month}")
    sha256, size, url = entry.get("sha256"), entry.get("bytes"), entry.get("downloadUrl")
    if not (isinstance(sha256, str) and _SHA256.fullmatch(sha256) and sha256[:16] in name):
        raise NotAManifest(f"{name}: its sha256 is not the one its name starts")
    if not (isinstance(size, int) and size > 0 and isinstance(url, str) and url):
        raise NotAManifest(f"{name}: no size or download address")
    return month, RemoteFile(month, name, sha256, size, url)


def read_companions(document: object) -> Listing:
    """The manifest's Parquet companions: each month's current file's, None for a month
    without (no games, or not built yet). Raises ``NotAManifest`` as ``read_manifest`` does,
    and for a companion whose name is not a companion name of its month."""
    read_manifest(document)
    assert isinstance(document, dict)
    months: dict[Month, RemoteFile | None] = {}
    for entry in document["months"]:
        month = Month.parse(str(entry["month"]))
        parquet = entry.get("parquet") if entry.get("file") is not None else None
        months[month] = None if parquet is None else _file(month, parquet, COMPANION_NAME_RE)
    return Listing(months)


def _file(month: Month, entry: object, pattern: re.Pattern[str]) -> RemoteFile:
    """A file of ``month`` as the manifest lists it (``file``, ``sha256``, ``bytes``,
    ``downloadUrl``), its name one of ``pattern``'s."""
    if not isinstance(entry, dict):
        raise NotAManifest(f"a file of {month} is not a JSON object")
    name = entry.get("file")
    match = pattern.fullmatch(name) if isinstance(name, str) else None
    # The name becomes a path in the folder: only a plain file name of its own month.
    if match is None or f"{match.group(1)}-{match.group(2)}" != str(month):
        raise NotAManifest(f"{name!r} is not a file name of {month}")
    assert isinstance(name, str)
    sha256, size, url = entry.get("sha256"), entry.get("bytes"), entry.get("downloadUrl")
    if not (isinstance(sha256, str) and _SHA256.fullmatch(sha256) and sha256[:16] in name):
        raise NotAManifest(f"{name}: its sha256 is not the one its name starts")
    if not (isinstance(size, int) and size > 0 and isinstance(url, str) and url):
        raise NotAManifest(f"{name}: no size or download address")
    return RemoteFile(month, name, sha256, size, url)


def local_archives(names: Iterable[str]) -> dict[Month, list[str]]:
    """The archive files among a folder's file names, by month (other files are not ours to
    touch)."""
    return _local(names, ARCHIVE_NAME_RE)


def local_companions(names: Iterable[str]) -> dict[Month, list[str]]:
    """The Parquet companions among a folder's file names, by month."""
    return _local(names, COMPANION_NAME_RE)


def _local(names: Iterable[str], pattern: re.Pattern[str]) -> dict[Month, list[str]]:
    found: dict[Month, list[str]] = {}
    for name in sorted(names):
        match = pattern.fullmatch(name)
        if match is not None:
            found.setdefault(Month(int(match.group(1)), int(match.group(2))), []).append(name)
    return found


@dataclass(frozen=True, slots=True)
class MonthPlan:
    """One month's work: fetch ``current`` (unless ``present``), then move ``stale`` aside."""

    month: Month
    status: Status
    current: RemoteFile | None
    present: bool
    """The current file is in the folder under its name (its SHA-256 is still checked)."""
    stale: tuple[str, ...]
    """The month's other archive files in the folder: superseded, or of a month removed."""

    def companions(self) -> tuple[str, ...]:
        """The stale files with their checksum files, as they move together."""
        return tuple(n for name in self.stale for n in (name, name + CHECKSUM_SUFFIX))


def in_range(month: Month, first: Month | None, last: Month | None) -> bool:
    return (first is None or month >= first) and (last is None or month <= last)


def plan(
    listing: Listing,
    local: Mapping[Month, Sequence[str]],
    *,
    first: Month | None = None,
    last: Month | None = None,
) -> list[MonthPlan]:
    """Each month of ``[first, last]`` that the manifest lists or the folder holds, oldest
    first. A month the manifest no longer lists with a file, but the folder holds, is
    ``removed``: its files are stale like a rebuilt month's."""
    months = sorted(m for m in {*listing.months, *local} if in_range(m, first, last))
    plans = []
    for month in months:
        current = listing.months.get(month)
        held = list(local.get(month, ()))
        present = current is not None and current.name in held
        stale = tuple(name for name in held if current is None or name != current.name)
        if current is None:
            status = Status.REMOVED if stale else Status.EMPTY
        elif stale:
            status = Status.REBUILT
        else:
            status = Status.UNCHANGED if present else Status.NEW
        plans.append(MonthPlan(month, status, current, present, stale))
    return plans
