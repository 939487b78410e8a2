import pytest

from gomoku_archive.worker.stale_jobs import StaleJobTracker, owner_alive

AUG = "export:2026-08"
AUG_FORCED = "export:2026-08:force:20260903T010203.456Z"
SEP = "export:2026-09"
RUN = 1_000_000  # a run's token: its in-progress key's expiry, in Redis' milliseconds


def test_a_job_without_its_lock_is_released_after_the_wait() -> None:
    tracker = StaleJobTracker(after_seconds=30)
    assert tracker.observe({AUG: RUN}, set(), now=100.0) == []
    assert tracker.observe({AUG: RUN + 1}, set(), now=129.9) == []  # a token reads ±1 ms
    assert tracker.observe({AUG: RUN}, set(), now=130.0) == [(AUG, RUN)]
    # Released: if arq still shows it in progress it starts a new wait.
    assert tracker.observe({AUG: RUN}, set(), now=131.0) == []


def test_a_new_run_of_the_job_starts_a_new_wait() -> None:
    tracker = StaleJobTracker(after_seconds=30)
    tracker.observe({AUG: RUN}, set(), now=0.0)
    # Another worker took the job at 29 (released by another watchdog): its own run.
    assert tracker.observe({AUG: RUN + 29_000}, set(), now=29.0) == []
    assert tracker.observe({AUG: RUN + 29_000}, set(), now=58.9) == []
    assert tracker.observe({AUG: RUN + 29_000}, set(), now=59.0) == [(AUG, RUN + 29_000)]


def test_holding_the_lock_resets_the_wait() -> None:
    tracker = StaleJobTracker(after_seconds=30)
    tracker.observe({AUG: RUN}, set(), now=0.0)
    assert tracker.observe({AUG: RUN}, {"2026-08"}, now=20.0) == []
    assert tracker.observe({AUG: RUN}, set(), now=40.0) == []  # the wait starts again at 40
    assert tracker.observe({AUG: RUN}, set(), now=69.0) == []
    assert tracker.observe({AUG: RUN}, set(), now=70.0) == [(AUG, RUN)]


def test_a_finished_job_is_forgotten() -> None:
    tracker = StaleJobTracker(after_seconds=30)
    tracker.observe({AUG: RUN}, set(), now=0.0)
    tracker.observe({}, set(), now=10.0)
    assert tracker.observe({AUG: RUN}, set(), now=35.0) == []


def test_months_are_told_apart_and_forced_jobs_count() -> None:
    tracker = StaleJobTracker(after_seconds=5)
    running = {AUG_FORCED: RUN, SEP: RUN, "cron:plan_months:1": RUN}
    tracker.observe(running, {"2026-09"}, now=0.0)
    assert tracker.observe(running, {"2026-09"}, now=5.0) == [(AUG_FORCED, RUN)]


def test_zero_wait_releases_at_once() -> None:
    assert StaleJobTracker(after_seconds=0).observe({SEP: RUN}, set(), now=1.0) == [(SEP, RUN)]


AUG_RANGE = "export:2026-08:build:7:range:3"


@pytest.mark.parametrize(
    ("job_id", "locked", "building", "alive"),
    [
        (AUG, {"2026-08"}, set(), True),
        (AUG, set(), {7}, False),
        (AUG_FORCED, set(), set(), False),
        (AUG_RANGE, {"2026-08"}, {7}, True),  # its build under way
        (AUG_RANGE, set(), {7}, False),  # its coordinator died: the lock went with it
        (AUG_RANGE, {"2026-08"}, {8}, False),  # another build of the month runs now
        (AUG_RANGE, {"2026-08"}, set(), False),  # published, failed or swept
        ("cron:plan_months:1", set(), set(), None),
        ("mirror:7", set(), set(), None),
        ("export:2026-13:build:7:range:3", set(), set(), None),
    ],
)
def test_whose_owner_is_alive(
    job_id: str, locked: set[str], building: set[int], alive: bool | None
) -> None:
    assert owner_alive(job_id, locked, building) is alive


def test_a_range_job_of_a_build_no_longer_under_way_is_released_after_the_wait() -> None:
    tracker = StaleJobTracker(after_seconds=30)
    running = {AUG_RANGE: RUN, AUG: RUN}
    assert tracker.observe(running, {"2026-08"}, now=0.0, live_builds={7}) == []
    # The coordinator died: its export and its range job wait from here on.
    assert tracker.observe(running, set(), now=10.0, live_builds={7}) == []
    assert tracker.observe(running, set(), now=39.9, live_builds={7}) == []
    assert tracker.observe(running, set(), now=40.0, live_builds={7}) == [
        (AUG, RUN),
        (AUG_RANGE, RUN),
    ]


def test_a_range_job_waits_while_its_month_runs_another_build() -> None:
    tracker = StaleJobTracker(after_seconds=5)
    # The month's next build (8) holds the lock; build 7's job is an orphan all the same.
    tracker.observe({AUG_RANGE: RUN}, {"2026-08"}, now=0.0, live_builds=set())
    assert tracker.observe({AUG_RANGE: RUN}, {"2026-08"}, now=5.0, live_builds={8}) == [
        (AUG_RANGE, RUN)
    ]
