"""How a two-process export splits a month: contiguous ranges of whole finish seconds, in
archive order, each holding about a target number of candidates. Pure: it works from the
month's candidates counted per hour (one query in the export's snapshot).

A slice boundary is a whole second and the archive's order key starts with the finish second,
so the rows of one second (same second, different ids) always fall in one slice; reading the
slices one after another in their order gives exactly the month's rows in archive order."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta

HOUR = timedelta(hours=1)
_SECONDS_PER_HOUR = 3600


@dataclass(frozen=True, slots=True)
class Slice:
    """Candidates finishing in ``[start, end)`` (naive UTC, whole seconds)."""

    start: datetime
    end: datetime
    candidates: int
    """Expected: the hour counts', shared evenly among the parts of a split hour."""


def plan_slices(
    hour_counts: Mapping[datetime, int], start: datetime, end: datetime, *, target: int
) -> list[Slice]:
    """Cover ``[start, end)`` (whole hours, naive UTC) with slices in order.

    Consecutive hours are gathered while their candidates stay within ``target``; an hour with
    more than ``target`` candidates is cut into equal lengths of time, enough of them for
    ``target`` each if its games are spread evenly (at most one per second). Hours without
    candidates join a neighbouring slice, so a quiet stretch costs no slice of its own (a part
    of a split hour may still find no rows: the counts are per hour)."""
    if target < 1:
        raise ValueError("target must be at least 1")
    if start.minute or start.second or start.microsecond or end <= start:
        raise ValueError("the range must be whole hours")
    slices: list[Slice] = []
    lo, held = start, 0
    hour = start
    while hour < end:
        count = hour_counts.get(hour, 0)
        if count > target:
            parts = _split_hour(hour, count, target)
            if held:
                slices.append(Slice(lo, hour, held))
            else:  # a quiet stretch before it joins its first part
                parts[0] = Slice(lo, parts[0].end, parts[0].candidates)
            slices.extend(parts)
            lo, held = hour + HOUR, 0
        elif held and held + count > target:
            slices.append(Slice(lo, hour, held))
            lo, held = hour, count
        else:
            held += count
        hour += HOUR
    if lo < end:
        if held == 0 and slices:  # a quiet tail joins the last slice
            last = slices.pop()
            slices.append(Slice(last.start, end, last.candidates))
        else:
            slices.append(Slice(lo, end, held))
    return slices


def _split_hour(hour: datetime, count: int, target: int) -> list[Slice]:
    parts = min(-(-count // target), _SECONDS_PER_HOUR)
    edges = [hour + timedelta(seconds=i * _SECONDS_PER_HOUR // parts) for i in range(parts + 1)]
    share, extra = divmod(count, parts)
    return [Slice(edges[i], edges[i + 1], share + (1 if i < extra else 0)) for i in range(parts)]
