"""``sync``'s decisions without I/O: which document is the manifest, and what each month of a
folder becomes (new, rebuilt, unchanged, removed, no games), with the files it supersedes."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from gomoku_archive.catalog.sync_plan import (
    NotAManifest,
    Status,
    local_archives,
    local_companions,
    plan,
    read_companions,
    read_manifest,
)
from gomoku_archive.profile.months import Month


def sha(seed: str) -> str:
    return hashlib.sha256(seed.encode()).hexdigest()


def name(month: str, seed: str) -> str:
    return f"gomoku-party-{month}-{sha(seed)[:16]}.sgf.gz"


def entry(month: str, seed: str | None) -> dict[str, Any]:
    if seed is None:
        return {"month": month, "file": None, "sha256": None, "bytes": 0, "downloadUrl": None}
    file = name(month, seed)
    return {
        "month": month,
        "file": file,
        "sha256": sha(seed),
        "bytes": 10,
        "downloadUrl": f"/api/v1/database/files/{file}",
    }


def manifest(*months: dict[str, Any]) -> dict[str, Any]:
    return {"schemaVersion": 1, "profile": "gomoku-party-sgf-1", "months": list(months)}


LISTING = read_manifest(
    manifest(entry("2026-11", "b"), entry("2026-10", "new"), entry("2026-09", None),
             entry("2026-08", "a"))
)  # fmt: skip


@pytest.mark.parametrize(
    ("held", "month", "status", "present", "stale"),
    [
        ([], "2026-08", Status.NEW, False, ()),
        ([name("2026-08", "a")], "2026-08", Status.UNCHANGED, True, ()),
        ([name("2026-10", "old")], "2026-10", Status.REBUILT, False, (name("2026-10", "old"),)),
        (  # interrupted after the download, before the old file left
            [name("2026-10", "old"), name("2026-10", "new")],
            "2026-10",
            Status.REBUILT,
            True,
            (name("2026-10", "old"),),
        ),
        ([], "2026-09", Status.EMPTY, False, ()),
        ([name("2026-09", "x")], "2026-09", Status.REMOVED, False, (name("2026-09", "x"),)),
        ([name("2026-07", "gone")], "2026-07", Status.REMOVED, False, (name("2026-07", "gone"),)),
    ],
)
def test_each_month_of_a_folder(
    held: list[str], month: str, status: Status, present: bool, stale: tuple[str, ...]
) -> None:
    plans = {str(p.month): p for p in plan(LISTING, local_archives([*held, "notes.txt"]))}
    chosen = plans[month]
    assert (chosen.status, chosen.present, chosen.stale) == (status, present, stale)


def test_months_come_oldest_first_within_the_range() -> None:
    months = plan(LISTING, {}, first=Month(2026, 9), last=Month(2026, 10))
    assert [str(p.month) for p in months] == ["2026-09", "2026-10"]
    assert [str(p.month) for p in plan(LISTING, {})] == ["2026-08", "2026-09", "2026-10", "2026-11"]


def test_only_archive_names_are_the_folders() -> None:
    found = local_archives(["a.sgf.gz", name("2026-08", "a"), name("2026-08", "a") + ".sha256"])
    assert found == {Month(2026, 8): [name("2026-08", "a")]}


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ([], "it is not a JSON object"),
        ({"hello": "world"}, "its profile is None, not 'gomoku-party-sgf-1'"),
        ({**manifest(), "schemaVersion": 2}, "its schemaVersion is 2, not 1"),
        ({**manifest(), "months": None}, "it has no list of months"),
        (manifest({**entry("2026-08", "a"), "file": "../x.sgf.gz"}), "is not an archive name"),
        (manifest({**entry("2026-08", "a"), "file": name("2026-09", "a")}), "archive name of"),
        (manifest({**entry("2026-08", "a"), "sha256": sha("b")}), "its sha256 is not the one"),
        (manifest({**entry("2026-08", "a"), "bytes": "10"}), "no size or download address"),
        (manifest(entry("2026-08", "a"), entry("2026-08", "b")), "it lists 2026-08 twice"),
        (manifest({**entry("2026-08", "a"), "month": "2026-8"}), "is not a month"),
    ],
)
def test_anything_but_the_manifest_is_refused(document: object, message: str) -> None:
    with pytest.raises(NotAManifest, match=message.replace("(", r"\(").replace(")", r"\)")):
        read_manifest(document)


def parquet(month: str, seed: str) -> dict[str, Any]:
    file = f"gomoku-party-{month}-{sha(seed)[:16]}.parquet"
    return {
        "file": file,
        "sha256": sha(seed),
        "bytes": 12,
        "downloadUrl": f"/api/v1/database/files/{file}",
    }


def test_the_companions_are_planned_as_the_archives_are() -> None:
    document = manifest(
        {**entry("2026-10", "new"), "parquet": parquet("2026-10", "p-new")},
        {**entry("2026-09", None), "parquet": None},
        {**entry("2026-08", "a"), "parquet": None},  # published before companions
    )
    listing = read_companions(document)
    old = f"gomoku-party-2026-10-{sha('p-old')[:16]}.parquet"
    held = [old, name("2026-10", "new"), "notes.parquet"]
    assert local_companions(held) == {Month(2026, 10): [old]}
    assert local_archives(held) == {Month(2026, 10): [name("2026-10", "new")]}
    plans = {p.month: p for p in plan(listing, local_companions(held))}
    rebuilt = plans[Month(2026, 10)]
    assert rebuilt.status is Status.REBUILT and rebuilt.stale == (old,)
    assert rebuilt.current is not None and rebuilt.current.name.endswith(".parquet")
    assert plans[Month(2026, 8)].status is Status.EMPTY
    assert plans[Month(2026, 9)].status is Status.EMPTY


@pytest.mark.parametrize(
    ("companion", "why"),
    [
        ({**parquet("2026-08", "p"), "file": "../x.parquet"}, "is not a file name of 2026-08"),
        (parquet("2026-09", "p"), "is not a file name of 2026-08"),
        ({**parquet("2026-08", "p"), "sha256": sha("other")}, "not the one its name starts"),
        ({**parquet("2026-08", "p"), "bytes": 0}, "no size"),
        ("gomoku-party-2026-08.parquet", "not a JSON object"),
    ],
)
def test_a_companion_that_is_not_the_month_s_is_refused(companion: object, why: str) -> None:
    with pytest.raises(NotAManifest, match=why):
        read_companions(manifest({**entry("2026-08", "a"), "parquet": companion}))
