from datetime import UTC, datetime, timedelta, timezone

import pytest

from gomoku_archive.jobs.ids import (
    JobRef,
    export_job_id,
    export_month_of,
    forced_export_job_id,
    mirror_job_id,
    parse_job_id,
)
from gomoku_archive.profile.months import Month

AUG = Month(2026, 8)


def test_export_ids() -> None:
    assert export_job_id(AUG) == "export:2026-08"
    at = datetime(2026, 9, 3, 1, 2, 3, 456789, tzinfo=UTC)
    assert forced_export_job_id(AUG, at) == "export:2026-08:force:20260903T010203.456Z"


def test_forced_ids_are_in_utc() -> None:
    paris = timezone(timedelta(hours=2))
    at = datetime(2026, 9, 3, 3, 2, 3, tzinfo=paris)
    assert forced_export_job_id(AUG, at) == "export:2026-08:force:20260903T010203.000Z"


def test_mirror_ids() -> None:
    assert mirror_job_id(42) == "mirror:42"
    with pytest.raises(ValueError, match="start at 1"):
        mirror_job_id(0)


@pytest.mark.parametrize(
    ("job_id", "expected"),
    [
        ("export:2026-08", JobRef("export", month=AUG)),
        ("export:2026-08:force:20260903T010203.456Z", JobRef("export", month=AUG, forced=True)),
        ("mirror:7", JobRef("mirror", archive_id=7)),
        # An older worker's range job (ranges are claimed from the table now): not ours.
        ("export:2026-08:build:17:range:3", JobRef("other")),
        ("cron:plan_months:1790000000123", JobRef("planner")),
        ("cron:plan_months", JobRef("planner")),
        ("cron:check_mirror:1790000000123", JobRef("check")),
        ("cron:check_mirror_content:1790000000123", JobRef("check")),
        ("cron:check_mirror_contents:1", JobRef("other")),
        ("export:2026-13", JobRef("other")),
        ("export:2026-08:force:", JobRef("other")),
        ("export:2026-08:extra", JobRef("other")),
        ("mirror:0", JobRef("other")),
        ("mirror:x", JobRef("other")),
        ("cron:plan_monthsX", JobRef("other")),
        ("0f3c2a", JobRef("other")),
        ("", JobRef("other")),
    ],
)
def test_parse_job_id(job_id: str, expected: JobRef) -> None:
    assert parse_job_id(job_id) == expected


def test_ids_round_trip() -> None:
    at = datetime(2027, 1, 31, 23, 59, 59, 999000, tzinfo=UTC)
    assert export_month_of(export_job_id(AUG)) == AUG
    assert export_month_of(forced_export_job_id(Month(2027, 1), at)) == Month(2027, 1)
    assert export_month_of(mirror_job_id(3)) is None
