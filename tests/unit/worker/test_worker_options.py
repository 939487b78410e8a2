import dataclasses
from datetime import UTC, datetime

from arq.cron import CronJob
from arq.worker import Function

from gomoku_archive.settings import Settings
from gomoku_archive.worker.arq_worker import worker_options
from gomoku_archive.worker.context import clock_of, settings_of
from gomoku_archive.worker.retry_policy import MAX_TRIES, MIRROR_MAX_TRIES
from gomoku_archive.worker.timeouts import EXPORT_CEILING_SECONDS

SETTINGS = Settings(redis_url="redis://127.0.0.1:6379/7")


def test_the_export_function() -> None:
    """No arq job per range: every worker's range slot claims them from the table."""
    options = worker_options(SETTINGS)
    [export, mirror, companion] = options["functions"]
    assert isinstance(export, Function)
    assert export.name == "export_month"
    assert export.timeout_s == EXPORT_CEILING_SECONDS
    assert export.max_tries == MAX_TRIES
    assert export.keep_result_s == 24 * 3600
    assert isinstance(mirror, Function)
    assert mirror.name == "mirror_archive"
    assert mirror.max_tries == MIRROR_MAX_TRIES
    # The planner queues an archive without a companion again; a failure is kept as the result.
    assert isinstance(companion, Function)
    assert companion.name == "build_companion"
    assert companion.max_tries == 1


def test_the_weekly_scrub_runs_only_with_a_bucket() -> None:
    assert [c.name for c in worker_options(SETTINGS)["cron_jobs"]] == ["cron:plan_months"]
    with_s3 = dataclasses.replace(SETTINGS, s3_bucket="gomoku-archives")
    scrub = worker_options(with_s3)["cron_jobs"][1]
    assert isinstance(scrub, CronJob)
    assert scrub.name == "cron:scrub_mirror"
    assert (scrub.weekday, scrub.hour, scrub.minute) == ("sun", 3, 30)
    assert not scrub.run_at_startup


def test_the_mirror_checks_follow_their_periods() -> None:
    with_s3 = dataclasses.replace(
        SETTINGS, s3_bucket="bucket", mirror_check_seconds=60, mirror_content_check_seconds=7200
    )
    crons = {c.name: c for c in worker_options(with_s3)["cron_jobs"]}
    head, content = crons["cron:check_mirror"], crons["cron:check_mirror_content"]
    assert (head.second, head.minute, head.hour) == ({0}, set(range(60)), None)
    # Second 30, away from the HEAD pass's second 0 (jobs.schedules).
    assert (content.second, content.minute, content.hour) == ({30}, {0}, set(range(0, 24, 2)))
    assert content.timeout_s == 7200, "a pass may take its whole period"


def test_the_planner_runs_at_start_up_and_every_six_hours_utc() -> None:
    options = worker_options(SETTINGS)
    [planner] = options["cron_jobs"]
    assert isinstance(planner, CronJob)
    assert planner.name == "cron:plan_months"
    assert planner.run_at_startup
    assert options["timezone"] is UTC
    runs = []
    at = datetime(2026, 9, 30, 19, 30, tzinfo=UTC)
    for _ in range(5):
        planner.calculate_next(at)
        assert planner.next_run is not None
        at = planner.next_run
        runs.append(at.strftime("%d %H:%M:%S"))
    assert runs == ["01 00:00:00", "01 06:00:00", "01 12:00:00", "01 18:00:00", "02 00:00:00"]


def test_json_jobs() -> None:
    options = worker_options(SETTINGS, grace_seconds=7)
    assert options["job_serializer"]({"a": [1]}) == b'{"a":[1]}'
    assert "redis_settings" not in options, "run_worker hands arq a pool of its own"
    assert options["job_completion_wait"] == 7
    assert options["handle_signals"] is True
    assert options["health_check_interval"] == 30


def test_the_clock_is_injected() -> None:
    now = datetime(2026, 10, 1, tzinfo=UTC)
    ctx = worker_options(SETTINGS, clock=lambda: now)["ctx"]
    assert clock_of(ctx)() == now
    assert settings_of(ctx) is SETTINGS
