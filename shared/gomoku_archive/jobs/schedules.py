"""When the worker's two periodic mirror checks run (arq cron fields), so that they never start
in the same second. Both take every copy's mirror lock in turn; started together, one pass
finds each copy held by the other. Pure.

A HEAD pass runs on the seconds of ``check_schedule(MIRROR_CHECK_SECONDS)``; the content pass
on seconds the HEAD pass never uses, chosen by ``content_schedule``. Only the second of the
minute is compared: two schedules that share no second cannot share a moment, whatever their
minutes and hours."""

from __future__ import annotations

from dataclasses import dataclass

MINUTE = 60
HOUR = 3600


@dataclass(frozen=True, slots=True)
class Schedule:
    """arq cron's ``second``, ``minute`` and ``hour`` (None: every one)."""

    second: frozenset[int]
    minute: frozenset[int] | None = None
    hour: frozenset[int] | None = None


def check_schedule(period_seconds: int) -> Schedule:
    """When to run a job at least every ``period_seconds`` (5 to 59, whole minutes below an
    hour, whole hours from an hour on: ``Settings`` checks it), from second 0. A period that
    does not divide the minute, hour or day gives a shorter gap at its turn, never a longer
    one."""
    if period_seconds < MINUTE:
        return Schedule(frozenset(range(0, MINUTE, period_seconds)))
    return _at_second(0, period_seconds)


def content_schedule(head_period_seconds: int, content_period_seconds: int) -> Schedule:
    """The content pass's schedule beside a HEAD pass every ``head_period_seconds``: every gap
    at most ``content_period_seconds`` as ``check_schedule`` promises, on seconds the HEAD pass
    never starts on. Of the schedules that qualify (one per first second, see ``_cover``) it
    takes the one with the fewest runs a minute, then the one farthest from the HEAD pass's
    seconds, then the earliest: 5 s beside 5 s runs at :02, :07, ...; 15 min beside 1 min at
    second 30."""
    taken = check_schedule(head_period_seconds).second
    distance = [min(min((t - h) % MINUTE, (h - t) % MINUTE) for h in taken) for t in range(MINUTE)]
    latest_free = _latest_free(taken)
    best: tuple[tuple[int, int, int], frozenset[int]] | None = None
    for first in range(MINUTE):
        if first in taken:
            continue
        seconds = (
            _cover(first, content_period_seconds, latest_free)
            if content_period_seconds < MINUTE
            else frozenset({first})
        )
        rank = (len(seconds), -min(distance[t] for t in seconds), first)
        if best is None or rank < best[0]:
            best = (rank, seconds)
    assert best is not None  # a HEAD pass takes at most 12 seconds of the minute
    if content_period_seconds < MINUTE:
        return Schedule(best[1])
    [second] = best[1]
    return _at_second(second, content_period_seconds)


def _at_second(second: int, period_seconds: int) -> Schedule:
    if period_seconds < HOUR:
        return Schedule(frozenset({second}), frozenset(range(0, MINUTE, period_seconds // MINUTE)))
    return Schedule(
        frozenset({second}), frozenset({0}), frozenset(range(0, 24, period_seconds // HOUR))
    )


def _latest_free(taken: frozenset[int]) -> list[int]:
    """For every second ``t`` of two minutes, the latest second at or before it (counted on
    from the first minute's start) that is not ``taken``."""
    latest: list[int] = []
    for t in range(2 * MINUTE):
        latest.append(latest[-1] if t % MINUTE in taken and latest else t)
    return latest


def _cover(first: int, period_seconds: int, latest_free: list[int]) -> frozenset[int]:
    """Seconds from ``first`` on, each the latest free second at most ``period_seconds`` after
    the one before, until the next minute's ``first`` is within a period. That second is always
    after the one before: the HEAD pass's seconds are at least 5 apart but across the minute's
    turn (59 and 0 at 59 s), so they take 2 of any 5 consecutive seconds at most."""
    runs, last = [first], first
    while last + period_seconds < first + MINUTE:
        step = latest_free[last + period_seconds]
        assert step > last
        runs.append(last := step)
    return frozenset(t % MINUTE for t in runs)
