from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta

import pytest

from gomoku_archive.db.range_store import BuildProgress, RunningRange
from gomoku_archive.jobs.month_view import (
    MonthState,
    describe_ranges,
    describe_running,
    games_per_second,
    month_statuses,
    seconds_left,
    shown_counts,
)
from gomoku_archive.jobs.planning import export_refusal
from gomoku_archive.jobs.queue_view import JobOutcome, QueuedJob, QueueSnapshot, parse_health_check
from gomoku_archive.jobs.status_document import month_document, status_document
from gomoku_archive.profile.months import Month

NOW = datetime(2026, 11, 2, 8, 0, tzinfo=UTC)
FIRST = Month(2026, 8)
T0 = datetime(2026, 11, 1, 0, 0, tzinfo=UTC)


@dataclass(frozen=True)
class Mirror:
    key: str | None = None
    verified_at: datetime | None = None
    checked_at: datetime | None = None
    failed_at: datetime | None = None
    error: str | None = None
    bucket: str | None = "archive-bucket"
    cdn_url: str | None = None
    cdn_verified_at: datetime | None = None
    cdn_error: str | None = None
    head_checked_at: datetime | None = None


@dataclass(frozen=True)
class Row:
    month: str
    state: str
    id: int = 1
    file_name: str | None = None
    bytes: int = 0
    games: int = 0
    candidate_games: int = 0
    excluded_games: int = 0
    created_at: datetime = T0
    finished_at: datetime | None = None
    published_at: datetime | None = None
    failed_at: datetime | None = None
    error: str | None = None
    built_at: datetime | None = None
    mirror: Mirror = Mirror()
    rebuild_reason: str | None = None
    last_rebuild_at: datetime | None = None
    last_rebuild_reason: str | None = None


def published(month: str, at: datetime = T0) -> Row:
    return Row(
        month,
        "published",
        published_at=at,
        finished_at=at,
        file_name=f"{month}.sgf.gz",
        games=10,
        candidate_games=12,
        excluded_games=2,
        bytes=1000,
    )


def failed(month: str, at: datetime = T0, error: str = "boom") -> Row:
    return Row(month, "failed", failed_at=at, finished_at=at, error=error)


def job(job_id: str, *, running: bool = False) -> QueuedJob:
    return QueuedJob(job_id, "export_month", {"month": job_id[7:14]}, T0, T0, 0, running)


def states(
    rows: Sequence[Row] = (),
    jobs: Sequence[QueuedJob] = (),
    locked: set[str] | None = None,
    queue: bool = True,
) -> dict[str, MonthState]:
    snapshot = QueueSnapshot(taken_at=NOW, queued=jobs) if queue else None
    found = month_statuses(
        first=FIRST, now=NOW, archives=rows, queue=snapshot, locked_months=locked or set()
    )
    return {s.month: s.state for s in found}


def test_every_closed_month_is_listed_newest_first() -> None:
    found = month_statuses(first=FIRST, now=NOW, archives=[], queue=None, locked_months=set())
    assert [s.month for s in found] == ["2026-10", "2026-09", "2026-08"]
    assert {s.state for s in found} == {"missing"}


@pytest.mark.parametrize(
    ("rows", "jobs", "locked", "expected"),
    [
        ([], [], set(), "missing"),
        ([published("2026-10")], [], set(), "published"),
        ([failed("2026-10")], [], set(), "failed"),
        ([failed("2026-10")], [job("export:2026-10")], set(), "queued"),  # waiting for a retry
        ([], [job("export:2026-10", running=True)], set(), "building"),
        ([], [], {"2026-10"}, "building"),  # the CLI (or another Redis's worker) is exporting
        (
            [published("2026-10")],
            [job("export:2026-10:force:20261102T070000.000Z")],
            set(),
            "queued",
        ),
        (
            [published("2026-10")],
            [job("export:2026-10:force:20261102T070000.000Z", running=True)],
            set(),
            "building",
        ),
        (
            [published("2026-10"), failed("2026-10", T0 + timedelta(hours=1))],
            [],
            set(),
            "published",
        ),  # a failed rebuild does not hide the file that is still served
        ([Row("2026-10", "building")], [], set(), "missing"),  # a dead export's leftover
        ([Row("2026-10", "superseded", published_at=T0)], [], set(), "missing"),
    ],
)
def test_month_state(
    rows: list[Row], jobs: list[QueuedJob], locked: set[str], expected: MonthState
) -> None:
    assert states(rows, jobs, locked)["2026-10"] == expected


def test_without_redis_the_database_still_tells() -> None:
    assert states([published("2026-10"), failed("2026-09")], locked={"2026-08"}, queue=False) == {
        "2026-10": "published",
        "2026-09": "failed",
        "2026-08": "building",
    }


def test_details_of_a_month() -> None:
    old_failure = failed("2026-10", T0 - timedelta(days=1), "old")
    new_failure = failed("2026-10", T0 + timedelta(hours=2), "new")
    rows = [
        published("2026-10"),
        Row("2026-10", "superseded", id=2, published_at=T0),
        Row("2026-10", "superseded", id=3, published_at=T0),
        old_failure,
        new_failure,
    ]
    [status] = [
        s
        for s in month_statuses(
            first=FIRST, now=NOW, archives=rows, queue=None, locked_months=set()
        )
        if s.month == "2026-10"
    ]
    assert status.superseded_versions == 2
    assert status.last_failure is new_failure
    assert status.published is rows[0]


def test_a_failure_older_than_the_published_file_is_not_shown() -> None:
    rows = [failed("2026-10", T0 - timedelta(hours=1)), published("2026-10")]
    [status] = [
        s
        for s in month_statuses(
            first=FIRST, now=NOW, archives=rows, queue=None, locked_months=set()
        )
        if s.month == "2026-10"
    ]
    assert status.last_failure is None


def test_a_failure_made_good_by_a_later_unchanged_rebuild_is_not_shown() -> None:
    """A forced rebuild failed, then another one succeeded with the same bytes (``unchanged``:
    the file's publication time does not move): the failure is history."""
    file = replace(published("2026-10"), built_at=T0 + timedelta(hours=3))
    rows = [failed("2026-10", T0 + timedelta(hours=2)), file]
    [status] = [
        s
        for s in month_statuses(
            first=FIRST, now=NOW, archives=rows, queue=None, locked_months=set()
        )
        if s.month == "2026-10"
    ]
    assert status.last_failure is None
    later = [failed("2026-10", T0 + timedelta(hours=4)), file]
    [status] = [
        s
        for s in month_statuses(
            first=FIRST, now=NOW, archives=later, queue=None, locked_months=set()
        )
        if s.month == "2026-10"
    ]
    assert status.last_failure is later[0]


def test_months_with_rows_or_jobs_outside_the_range_are_listed() -> None:
    found = states([published("2026-07")], [job("export:2026-11")])
    assert found["2026-07"] == "published"
    assert found["2026-11"] == "queued"


def test_jobs_of_other_kinds_do_not_count() -> None:
    other = QueuedJob("mirror:3", "mirror_archive", {}, T0, T0, 0, True)
    assert states(jobs=[other])["2026-10"] == "missing"


@pytest.mark.parametrize(
    ("month", "now", "refusal"),
    [
        (Month(2026, 10), NOW, None),
        (Month(2026, 8), NOW, None),
        (Month(2026, 7), NOW, "2026-07 is before the first published month 2026-08"),
        (Month(2026, 11), NOW, "2026-11 is not closed yet; it closes at 2026-12-01T00:00:00Z"),
        (
            Month(2026, 10),
            datetime(2026, 10, 31, 23, 59, 59, tzinfo=UTC),
            "2026-10 is not closed yet; it closes at 2026-11-01T00:00:00Z",
        ),
        (Month(2026, 10), datetime(2026, 11, 1, tzinfo=UTC), None),
    ],
)
def test_export_refusal(month: Month, now: datetime, refusal: str | None) -> None:
    assert export_refusal(month, first=FIRST, now=now) == refusal


def test_parse_health_check() -> None:
    text = "Nov-02 08:00:00 j_complete=3 j_failed=1 j_retried=2 j_ongoing=1 queued=4"
    assert parse_health_check(text) == {
        "j_complete": 3,
        "j_failed": 1,
        "j_retried": 2,
        "j_ongoing": 1,
        "queued": 4,
    }
    assert parse_health_check(None) is None
    assert parse_health_check("") is None


@pytest.mark.parametrize(
    ("success", "result", "outcome", "error"),
    [
        (True, {"outcome": "published", "games": 3}, "published", None),
        (True, None, "done", None),
        (
            False,
            {"error": "ExportFailed", "message": "out of order"},
            "failed",
            "ExportFailed: out of order",
        ),
        (False, {"error": "JobExecutionFailed", "message": ""}, "failed", "JobExecutionFailed"),
        (False, "unable to serialize result", "failed", "unable to serialize result"),
    ],
)
def test_job_outcome(success: bool, result: object, outcome: str, error: str | None) -> None:
    r = JobOutcome(
        "export:2026-10", "export_month", success, 1, T0, T0, T0 + timedelta(seconds=3), result
    )
    assert (r.outcome, r.error, r.seconds) == (outcome, error, 3.0)


def test_status_document() -> None:
    queue = QueueSnapshot(
        taken_at=NOW,
        queued=[job("export:2026-10"), job("export:2026-09", running=True)],
        results=[
            JobOutcome(
                "export:2026-08",
                "export_month",
                False,
                8,
                T0,
                T0,
                T0,
                {"error": "ExportFailed", "message": "x"},
            )
        ],
        health_check="Nov-02 08:00:00 j_complete=0 j_failed=1 j_retried=0 j_ongoing=1 queued=2",
        planner_last_run={"at": NOW.isoformat(), "enqueued": ["2026-10"]},
    )
    months = month_statuses(
        first=FIRST, now=NOW, archives=[failed("2026-08")], queue=queue, locked_months={"2026-09"}
    )
    doc = status_document(
        now=NOW, months=months, queue=queue, redis_error=None, database_error=None
    )
    assert doc["now"] == "2026-11-02T08:00:00Z"
    assert doc["redis"] == {"ok": True, "error": None}
    jobs = doc["jobs"]
    assert [j["id"] for j in jobs["queued"]] == ["export:2026-10"]
    assert [j["id"] for j in jobs["inProgress"]] == ["export:2026-09"]
    assert jobs["recentResults"][0]["error"] == "ExportFailed: x"
    assert jobs["healthCheck"]["counts"]["j_failed"] == 1
    assert jobs["plannerLastRun"]["enqueued"] == ["2026-10"]
    by_month = {m["month"]: m for m in doc["months"]}
    assert by_month["2026-10"]["state"] == "queued"
    assert by_month["2026-09"]["state"] == "building"
    assert by_month["2026-09"]["lockHeld"]
    assert by_month["2026-08"]["state"] == "failed"
    assert by_month["2026-08"]["lastFailure"]["error"] == "boom"


def test_status_document_without_redis() -> None:
    doc = status_document(now=NOW, months=[], queue=None, redis_error="down", database_error=None)
    assert doc["jobs"] is None
    assert doc["redis"] == {"ok": False, "error": "down"}


def build(**counts: int) -> BuildProgress:
    fields = {"ranges": 10, "done": 3, "running": 2, "queued": 4, "failed": 1}
    fields |= {"planned": 1_000_000, "candidates_done": 400_000, "games_done": 0}
    fields |= counts
    return BuildProgress(
        archive_id=9, month="2026-09", created_at=NOW - timedelta(seconds=100), **fields
    )


def test_a_building_month_shows_its_ranges() -> None:
    ranges = build()
    queue = QueueSnapshot(taken_at=NOW, queued=[job("export:2026-09", running=True)])
    months = month_statuses(
        first=FIRST,
        now=NOW,
        archives=[],
        queue=queue,
        locked_months={"2026-09"},
        builds={"2026-09": ranges, "2026-08": ranges},
    )
    by_month = {s.month: s for s in months}
    assert by_month["2026-09"].ranges == ranges
    assert by_month["2026-08"].ranges is None  # not building: an old plan is not shown
    assert games_per_second(ranges, NOW) == 4000
    assert seconds_left(ranges, NOW) == 150
    assert describe_ranges(ranges, NOW) == (
        "ranges 3/10 done, 2 running, 4 queued, 1 failed (retried)"
        " · 4,000 games/s · about 2 min left"
    )
    doc = month_document(by_month["2026-09"], NOW)
    assert (doc["ranges"]["done"], doc["ranges"]["secondsLeft"]) == (3, 150)
    assert doc["ranges"]["gamesPerSecond"] == 4000.0


def test_a_build_without_progress_has_no_rate() -> None:
    ranges = build(ranges=4, done=0, running=0, queued=4, failed=0, candidates_done=0)
    assert games_per_second(ranges, NOW) is None and seconds_left(ranges, NOW) is None
    assert describe_ranges(ranges, NOW) == "ranges 0/4 done, 0 running, 4 queued"


def held(seq: int, *, archive_id: int = 9, stale: bool = False) -> RunningRange:
    return RunningRange(
        archive_id=archive_id,
        seq=seq,
        worker=f"host-{seq}:42",
        attempt=1,
        planned=50_000,
        candidates_done=12_000,
        started_at=NOW - timedelta(seconds=4),
        heartbeat_at=NOW - timedelta(seconds=20 if stale else 1),
        waited_seconds=0.013,
        stale=stale,
    )


def test_each_running_range_shows_its_worker_and_its_wait() -> None:
    ranges = build(running=2, stalled=1, wait_median=0.012, wait_max=0.31, oldest_waiting=2.5)
    running = [held(3), held(4, stale=True), held(0, archive_id=5)]  # 5: another month's build
    months = month_statuses(
        first=FIRST,
        now=NOW,
        archives=[],
        queue=QueueSnapshot(taken_at=NOW, queued=[job("export:2026-09", running=True)]),
        locked_months={"2026-09"},
        builds={"2026-09": ranges},
        running=running,
    )
    status = next(s for s in months if s.month == "2026-09")
    assert [r.seq for r in status.running_ranges] == [3, 4]
    assert shown_counts(ranges) == (1, 1)
    assert describe_ranges(ranges, NOW) == (
        "ranges 3/10 done, 1 running, 4 queued, 1 failed (retried), 1 stalled (taken over by "
        "the next free worker) · 4,000 games/s · about 2 min left · waits 0.01 s median, 0.31 s "
        "longest, the oldest queued 2.50 s so far"
    )
    assert describe_running(held(3), NOW) == (
        "range 3 on host-3:42, attempt 1, waited 0.01 s, running 4 s, 12,000/50,000 candidates"
    )
    assert describe_running(held(4, stale=True), NOW).endswith(
        " · no heartbeat for 20 s: the next free worker takes it over"
    )
    doc = month_document(status, NOW)["ranges"]
    assert (doc["underWay"], doc["running"], doc["stalled"]) == (True, 1, 1)
    assert doc["waits"] == {
        "medianSeconds": 0.012,
        "longestSeconds": 0.31,
        "oldestQueuedSeconds": 2.5,
    }
    assert [(r["range"], r["worker"], r["waitedSeconds"]) for r in doc["runningRanges"]] == [
        (3, "host-3:42", 0.013),
        (4, "host-4:42", 0.013),
    ]


@pytest.mark.parametrize("export_running", [True, False])
def test_nothing_of_a_build_whose_coordinator_is_gone_is_shown_running(
    export_running: bool,
) -> None:
    """A pool that crashed leaves its ranges ``running`` in the table, and perhaps its export
    in progress in arq; nobody holds the month's lock, so nothing of that build runs."""
    dead = build(running=2, under_way=False)
    jobs = [job("export:2026-09", running=True)] if export_running else []
    months = month_statuses(
        first=FIRST,
        now=NOW,
        archives=[],
        queue=QueueSnapshot(taken_at=NOW, queued=jobs),
        locked_months=set(),
        builds={"2026-09": dead},
        running=[held(3), held(4)],
    )
    status = next(s for s in months if s.month == "2026-09")
    assert status.running_ranges == ()
    if status.ranges is not None:  # shown while arq still says its export runs
        assert describe_ranges(status.ranges, NOW) == (
            "ranges 3/10 done, 0 running, 4 queued, 1 failed (retried) · its coordinator is "
            "gone: nothing runs (2 held by no one); the month's next run removes them"
        )
        doc = month_document(status, NOW)["ranges"]
        assert (doc["underWay"], doc["running"], doc["stalled"]) == (False, 0, 2)
        assert doc["runningRanges"] == []
    document = status_document(
        now=NOW, months=months, queue=None, redis_error="down", database_error=None
    )
    shown = [m["ranges"] for m in document["months"] if m["ranges"]]
    assert all(r["running"] == 0 and not r["runningRanges"] for r in shown)
