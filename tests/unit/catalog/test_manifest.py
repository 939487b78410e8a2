from dataclasses import replace
from datetime import UTC, datetime

import pytest

from gomoku_archive.catalog.manifest import (
    MonthSummary,
    ParquetFile,
    PreviousFile,
    build_manifest,
)
from gomoku_archive.companion.file_names import companion_file_name, is_companion_name
from gomoku_archive.profile.months import Month
from gomoku_archive.profile.names import archive_file_name, checksum_line, is_archive_name
from gomoku_archive.profile.vocabulary import ALL_REASONS, ALL_TERMINATIONS

SHA = "0123456789abcdef" + "f" * 48


def summary(month: str, games: int, file: str | None) -> MonthSummary:
    return MonthSummary(
        month=month,
        games=games,
        file_name=file,
        bytes=1234 if file else 0,
        uncompressed_bytes=9999 if file else 0,
        sha256=SHA if file else None,
        published_at=datetime(2026, 9, 1, 0, 5, 7, 123456, tzinfo=UTC),
        candidate_games=games + 2,
        excluded_games=2,
        exclusions={"aborted": 1, "occupied": 1},
        results={"FIVE": games},
    )


def test_manifest_document() -> None:
    name = archive_file_name(Month(2026, 9), SHA)
    doc = build_manifest([summary("2026-08", 0, None), summary("2026-09", 5, name)])
    assert doc["schemaVersion"] == 1
    assert doc["profile"] == "gomoku-party-sgf-1"
    assert doc["license"] == "CC0-1.0"
    assert doc["scope"] == {
        "mode": "RANKED",
        "rated": True,
        "ruleset": "FREESTYLE",
        "boardSize": 15,
    }
    assert doc["totalGames"] == 5
    assert [m["month"] for m in doc["months"]] == ["2026-09", "2026-08"]
    sept, aug = doc["months"]
    assert sept["file"] == "gomoku-party-2026-09-0123456789abcdef.sgf.gz"
    assert sept["downloadUrl"] == "/api/v1/database/files/" + sept["file"]
    assert sept["checksumUrl"] == sept["downloadUrl"] + ".sha256"
    assert sept["torrentUrl"] == sept["downloadUrl"] + ".torrent"
    assert sept["publishedAt"] == "2026-09-01T00:05:07Z"
    assert list(sept["exclusions"]) == list(ALL_REASONS)
    assert sept["exclusions"]["aborted"] == 1
    assert sept["exclusions"]["empty"] == 0
    assert list(sept["results"]) == list(ALL_TERMINATIONS)
    assert sept["results"]["TIMEOUT"] == 0
    # A zero-game month is listed, with no file.
    assert aug["games"] == 0
    assert aug["file"] is None and aug["downloadUrl"] is None and aug["checksumUrl"] is None
    assert aug["torrentUrl"] is None
    assert aug["sha256"] is None and aug["bytes"] == 0 and aug["uncompressedBytes"] == 0
    assert aug["candidateGames"] == aug["games"] + aug["excludedGames"]
    assert sept["previousFiles"] == [] and aug["previousFiles"] == []


def previous(sha: str, day: int) -> PreviousFile:
    return PreviousFile(
        file_name=archive_file_name(Month(2026, 9), sha),
        sha256=sha,
        bytes=100 + day,
        games=day,
        candidate_games=day + 1,
        excluded_games=1,
        published_at=datetime(2026, 10, day, tzinfo=UTC),
        superseded_at=datetime(2026, 10, day + 1, 12, tzinfo=UTC),
    )


def test_previous_files_newest_first() -> None:
    old, older = previous("a" * 64, 5), previous("b" * 64, 2)
    name = archive_file_name(Month(2026, 9), SHA)
    doc = build_manifest([replace(summary("2026-09", 5, name), previous=(older, old))])
    listed = doc["months"][0]["previousFiles"]
    assert [p["sha256"] for p in listed] == ["a" * 64, "b" * 64]
    assert listed[0] == {
        "file": "gomoku-party-2026-09-aaaaaaaaaaaaaaaa.sgf.gz",
        "sha256": "a" * 64,
        "bytes": 105,
        "games": 5,
        "candidateGames": 6,
        "excludedGames": 1,
        "downloadUrl": "/api/v1/database/files/gomoku-party-2026-09-aaaaaaaaaaaaaaaa.sgf.gz",
        "checksumUrl": "/api/v1/database/files/gomoku-party-2026-09-aaaaaaaaaaaaaaaa.sgf.gz.sha256",
        "torrentUrl": "/api/v1/database/files/gomoku-party-2026-09-aaaaaaaaaaaaaaaa.sgf.gz.torrent",
        "publishedAt": "2026-10-05T00:00:00Z",
        "firstPublishedAt": "2026-10-05T00:00:00Z",
        "supersededAt": "2026-10-06T12:00:00Z",
        "rebuildReason": None,
        "parquet": None,
    }
    assert doc["totalGames"] == 5, "earlier files are history, not more games"


PARQUET = ParquetFile(
    file_name=companion_file_name(Month(2026, 9), "c" * 64),
    sha256="c" * 64,
    bytes=4321,
    rows=5,
    row_groups=1,
    schema_id="gomoku-party-parquet-1",
    created_by="parquet-cpp-arrow version 26.0.1",
)


def test_a_file_lists_its_parquet_companion() -> None:
    name = archive_file_name(Month(2026, 9), SHA)
    with_companion = replace(summary("2026-09", 5, name), parquet=PARQUET)
    old = replace(previous("a" * 64, 5), parquet=PARQUET)
    doc = build_manifest([replace(with_companion, previous=(old,)), summary("2026-08", 0, None)])
    sept, aug = doc["months"]
    assert sept["parquet"] == {
        "file": "gomoku-party-2026-09-cccccccccccccccc.parquet",
        "downloadUrl": "/api/v1/database/files/gomoku-party-2026-09-cccccccccccccccc.parquet",
        "checksumUrl": "/api/v1/database/files/gomoku-party-2026-09-cccccccccccccccc.parquet"
        ".sha256",
        "bytes": 4321,
        "sha256": "c" * 64,
        "rows": 5,
        "rowGroups": 1,
        "schema": "gomoku-party-parquet-1",
        "createdBy": "parquet-cpp-arrow version 26.0.1",
    }
    assert sept["previousFiles"][0]["parquet"] == sept["parquet"]
    assert aug["parquet"] is None, "a month without games has no file, so no companion"
    assert doc["totalGames"] == 5, "a companion holds the same games, not more"


def test_companion_names() -> None:
    name = companion_file_name(Month(2026, 8), SHA)
    assert name == "gomoku-party-2026-08-0123456789abcdef.parquet"
    assert is_companion_name(name)
    assert not is_archive_name(name) and not is_companion_name(
        archive_file_name(Month(2026, 8), SHA)
    )
    with pytest.raises(ValueError, match="SHA-256"):
        companion_file_name(Month(2026, 8), "ABC")


def test_archive_names() -> None:
    name = archive_file_name(Month(2026, 8), SHA)
    assert name == "gomoku-party-2026-08-0123456789abcdef.sgf.gz"
    assert is_archive_name(name)
    assert checksum_line(name, SHA) == f"{SHA}  {name}\n"
    with pytest.raises(ValueError, match="SHA-256"):
        archive_file_name(Month(2026, 8), "ABC")


@pytest.mark.parametrize(
    "name",
    [
        "../gomoku-party-2026-08-0123456789abcdef.sgf.gz",
        "gomoku-party-2026-08-0123456789ABCDEF.sgf.gz",
        "gomoku-party-2026-13-0123456789abcdef.sgf.gz",
        "gomoku-party-2026-08-0123456789abcdef.sgf.gz.sha256",
        "gomoku-party-2026-08-0123456789abcde.sgf.gz",
        "gomoku-party-2026-08-0123456789abcdef.sgf.gz/",
        "gomoku-party-2026-08-0123456789abcdef.sgf.gz\n",
        "x" * 5000,
    ],
)
def test_hostile_names(name: str) -> None:
    assert not is_archive_name(name)


def test_each_version_carries_the_reason_it_was_rebuilt_for() -> None:
    """Added fields only (schemaVersion stays 1): the month's current file and each earlier
    file or zero-game listing say why the rebuild that built them was asked, null if none."""
    name = archive_file_name(Month(2026, 9), SHA)
    earlier = replace(previous("a" * 64, 5), rebuild_reason="late games arrived")
    current = replace(
        summary("2026-09", 5, name), rebuild_reason="scores fixed", previous=(earlier,)
    )
    doc = build_manifest([current, summary("2026-08", 0, None)])
    assert doc["schemaVersion"] == 1
    sept, aug = doc["months"]
    assert sept["rebuildReason"] == "scores fixed"
    assert [p["rebuildReason"] for p in sept["previousFiles"]] == ["late games arrived"]
    assert aug["rebuildReason"] is None
