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


@pytest.mark.parametrize(
    ("job_id", "locked", "alive"),
    [
        (AUG, {"2026-08"}, True),
        (AUG, set(), False),
        (AUG_FORCED, set(), False),
        ("cron:plan_months:1", set(), None),
        ("mirror:7", set(), None),
        # An older worker's range job: not the watchdog's business (arq ends it).
        ("export:2026-08:build:7:range:3", set(), None),
    ],
)
def test_whose_owner_is_alive(job_id: str, locked: set[str], alive: bool | None) -> None:
    assert owner_alive(job_id, locked) is alive
