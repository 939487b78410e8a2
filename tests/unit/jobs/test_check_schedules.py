"""The mirror checks' schedules (``jobs.schedules``): each runs at least every period, and the
content pass never starts in the same second as the HEAD pass, for every pair of periods the
settings allow; at the defaults and the shortest periods, checked with arq's own cron
arithmetic on the worker's own cron jobs."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta

import pytest
from arq.cron import CronJob
from hypothesis import given
from hypothesis import strategies as st

from gomoku_archive.jobs.schedules import Schedule, check_schedule, content_schedule
from gomoku_archive.settings import Settings
from gomoku_archive.worker.arq_worker import worker_options

HEAD_PERIODS = [*range(5, 60), *range(60, 3601, 60)]
"""Every MIRROR_CHECK_SECONDS the settings take."""
CONTENT_PERIODS = [*range(5, 60), *range(60, 3600, 60), *range(3600, 86401, 3600)]
"""Every MIRROR_CONTENT_CHECK_SECONDS the settings take."""

periods = st.one_of(
    st.integers(min_value=5, max_value=59),
    st.integers(min_value=1, max_value=59).map(lambda m: m * 60),
    st.integers(min_value=1, max_value=24).map(lambda h: h * 3600),
)


def test_the_periods_listed_are_the_settings_own() -> None:
    for head in (4, *HEAD_PERIODS, 3660):
        allowed = head in HEAD_PERIODS
        assert _allowed(mirror_check_seconds=head) == allowed, head
    for content in (4, 61, *CONTENT_PERIODS, 5400, 90000):
        allowed = content in CONTENT_PERIODS
        assert _allowed(mirror_content_check_seconds=content) == allowed, content


def _allowed(**periods: int) -> bool:
    try:
        Settings(**periods)  # type: ignore[arg-type]
    except Exception:
        return False
    return True


def fire_times(schedule: Schedule) -> list[int]:
    """Every second of a day at which arq's cron fires, as seconds after midnight."""
    return sorted(
        h * 3600 + m * 60 + s
        for h in (schedule.hour if schedule.hour is not None else range(24))
        for m in (schedule.minute if schedule.minute is not None else range(60))
        for s in schedule.second
        if 0 <= s < 60 and 0 <= m < 60 and 0 <= h < 24
    )


def longest_gap(schedule: Schedule) -> int:
    times = fire_times(schedule)
    return max(b - a for a, b in zip(times, [*times[1:], times[0] + 86400], strict=True))


@pytest.mark.parametrize(
    ("head", "content", "second", "minute", "hour"),
    [
        # the defaults: HEAD at :00 every minute, content at :30 of minutes 0, 15, 30 and 45
        (60, 900, {30}, {0, 15, 30, 45}, None),
        (5, 5, set(range(2, 60, 5)), None, None),  # the shortest: 2 s after every HEAD pass
        (5, 900, {2}, {0, 15, 30, 45}, None),
        (60, 5, set(range(2, 60, 5)), None, None),
        (3600, 7200, {30}, {0}, set(range(0, 24, 2))),
        # 7 does not divide the minute: HEAD at 0, 7, ..., 56 takes every residue of 5, so
        # no content second 5 apart fits; it steps around them, never more than 5 s apart.
        (7, 5, {1, 6, 11, 16, 20, 25, 30, 34, 39, 44, 48, 53, 58}, None, None),
        (59, 59, {29, 30}, None, None),  # HEAD at 0 and 59
    ],
)
def test_content_schedules(
    head: int, content: int, second: set[int], minute: set[int] | None, hour: set[int] | None
) -> None:
    found = content_schedule(head, content)
    assert (found.second, found.minute, found.hour) == (second, minute, hour)


@pytest.mark.slow  # 15,870 pairs: a few seconds of CPU
def test_no_allowed_pair_of_periods_shares_a_second() -> None:
    for head in HEAD_PERIODS:
        taken = check_schedule(head).second
        for content in CONTENT_PERIODS:
            found = content_schedule(head, content)
            assert not found.second & taken, (head, content)
            if content < 60:
                assert _minute_gaps(found.second) <= content, (head, content)


def _minute_gaps(seconds: frozenset[int]) -> int:
    ordered = sorted(seconds)
    return max((b - a) % 60 or 60 for a, b in zip(ordered, ordered[1:] + ordered[:1], strict=True))


@given(head=st.sampled_from(HEAD_PERIODS), content=periods)
def test_the_content_pass_runs_at_least_every_period_and_never_with_the_head_pass(
    head: int, content: int
) -> None:
    found = content_schedule(head, content)
    head_times = set(fire_times(check_schedule(head)))
    assert not head_times & set(fire_times(found))
    assert longest_gap(found) <= content


@given(periods)
def test_the_head_pass_runs_at_least_every_period(period: int) -> None:
    assert longest_gap(check_schedule(min(period, 3600))) <= min(period, 3600)


def runs(cron: CronJob, start: datetime, end: datetime) -> set[datetime]:
    """When arq's cron runs the job from ``start`` to ``end``, by arq's own arithmetic."""
    found: set[datetime] = set()
    at = start - timedelta(seconds=1)
    while True:
        cron.calculate_next(at)
        assert cron.next_run is not None
        if cron.next_run >= end:
            return found
        found.add(cron.next_run.replace(microsecond=0))
        at = cron.next_run


@pytest.mark.parametrize(
    ("head", "content"), [(60, 900), (5, 5)], ids=["the defaults", "the shortest"]
)
def test_the_worker_never_starts_both_checks_at_once(head: int, content: int) -> None:
    settings = dataclasses.replace(
        Settings(redis_url="redis://127.0.0.1:6379/7"),
        s3_bucket="bucket",
        mirror_check_seconds=head,
        mirror_content_check_seconds=content,
    )
    crons = {c.name: c for c in worker_options(settings)["cron_jobs"]}
    start = datetime(2026, 11, 2, tzinfo=UTC)
    span = timedelta(hours=2)  # both schedules repeat every hour
    head_runs = runs(crons["cron:check_mirror"], start, start + span)
    content_runs = runs(crons["cron:check_mirror_content"], start, start + span)
    assert len(head_runs) == span // timedelta(seconds=head)
    assert len(content_runs) == span // timedelta(seconds=content)
    assert not head_runs & content_runs
    apart = next(
        d
        for d in range(1, 61)
        if any(c + timedelta(seconds=s) in head_runs for c in content_runs for s in (d, -d))
    )
    assert apart == (30 if content >= 60 else 2), "the nearest runs of the two, in seconds"
