from workers.stale_jobs import StaleJobTracker

AUG = "export:2026-08"
AUG_FORCED = "export:2026-08:force:20260903T010203.456Z"
SEP = "export:2026-09"


def test_a_job_without_its_lock_is_released_after_the_wait() -> None:
    tracker = StaleJobTracker(after_seconds=30)
    assert tracker.observe([AUG], set(), now=100.0) == []
    assert tracker.observe([AUG], set(), now=129.9) == []
    assert tracker.observe([AUG], set(), now=130.0) == [AUG]
    # Released: if arq still shows it in progress it starts a new wait.
    assert tracker.observe([AUG], set(), now=131.0) == []


def test_holding_the_lock_resets_the_wait() -> None:
    tracker = StaleJobTracker(after_seconds=30)
    tracker.observe([AUG], set(), now=0.0)
    assert tracker.observe([AUG], {"2026-08"}, now=20.0) == []
    assert tracker.observe([AUG], set(), now=40.0) == []  # the wait starts again at 40
    assert tracker.observe([AUG], set(), now=69.0) == []
    assert tracker.observe([AUG], set(), now=70.0) == [AUG]


def test_a_finished_job_is_forgotten() -> None:
    tracker = StaleJobTracker(after_seconds=30)
    tracker.observe([AUG], set(), now=0.0)
    tracker.observe([], set(), now=10.0)
    assert tracker.observe([AUG], set(), now=35.0) == []


def test_months_are_told_apart_and_forced_jobs_count() -> None:
    tracker = StaleJobTracker(after_seconds=5)
    tracker.observe([AUG_FORCED, SEP, "cron:plan_months:1"], {"2026-09"}, now=0.0)
    assert tracker.observe([AUG_FORCED, SEP, "cron:plan_months:1"], {"2026-09"}, now=5.0) == [
        AUG_FORCED
    ]


def test_zero_wait_releases_at_once() -> None:
    assert StaleJobTracker(after_seconds=0).observe([SEP], set(), now=1.0) == [SEP]
