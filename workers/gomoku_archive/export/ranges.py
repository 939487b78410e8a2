"""How a month is cut into ranges that any worker may export: contiguous spans of whole finish
seconds, in archive order, each holding about ``RANGE_CANDIDATES`` candidates. Pure: it works
from the month's candidates counted per minute (one short query on the source).

A boundary is a whole second and the archive's order key starts with the finish second, so the
rows of one second (same second, different ids) always fall in one range; reading the ranges
one after another gives exactly the month's rows in archive order. The plan is a function of the
counts alone, so the same rows always give the same ranges, whichever worker plans them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta

RANGE_CANDIDATES = 50_000
"""K: candidates per range, part of the exporter's identity. Each range is compressed by a fresh
zlib stream, so K decides where a big month's deflate stream restarts: changing it changes the
bytes of every month with more than K candidates (a month with at most K is one range, and its
bytes are those of one stream). Chosen by measurement (tests/benchmarks/RESULTS.md, "ranges"):
on a 1,032,000-candidate month exported by one process, K from 25,000 to 100,000 costs no
measurable time against one range, and 15 KB (0.017 %) of compressed size at 50,000; a range
takes about 9 s of one core, so that its source transaction lasts seconds, the last range a
worker pool waits for is short, and a 100-million-game month is 2,000 ranges for the pool."""

MINUTE = timedelta(minutes=1)


@dataclass(frozen=True, slots=True)
class Range:
    """Candidates finishing in ``[start, end)`` (naive UTC, whole seconds)."""

    start: datetime
    end: datetime
    candidates: int
    """Expected: the bucket counts', shared evenly among the parts of a split bucket."""


def plan_ranges(
    counts: Mapping[datetime, int],
    start: datetime,
    end: datetime,
    *,
    target: int = RANGE_CANDIDATES,
    bucket: timedelta = MINUTE,
) -> list[Range]:
    """Cover ``[start, end)`` (whole buckets, naive UTC) with ranges in order.

    Consecutive buckets are gathered while their candidates stay within ``target``; a bucket
    with more than ``target`` candidates is cut into equal lengths of time, enough of them for
    ``target`` each if its games are spread evenly, whole seconds at most. Buckets without
    candidates join a neighbouring range, so a quiet stretch costs no range of its own (a part
    of a split bucket may still find no rows: the counts are per bucket). A month with at most
    ``target`` candidates is one range."""
    seconds = int(bucket.total_seconds())
    if target < 1:
        raise ValueError("target must be at least 1")
    if seconds < 1 or bucket != timedelta(seconds=seconds):
        raise ValueError("the bucket must be whole seconds")
    if (start - datetime.min).total_seconds() % seconds or end <= start or (end - start) % bucket:
        raise ValueError("the range must be whole buckets")
    ranges: list[Range] = []
    lo, held = start, 0
    at = start
    while at < end:
        count = counts.get(at, 0)
        if count > target:
            parts = _split(at, count, target, seconds)
            if held:
                ranges.append(Range(lo, at, held))
            else:  # a quiet stretch before it joins its first part
                parts[0] = Range(lo, parts[0].end, parts[0].candidates)
            ranges.extend(parts)
            lo, held = at + bucket, 0
        elif held and held + count > target:
            ranges.append(Range(lo, at, held))
            lo, held = at, count
        else:
            held += count
        at += bucket
    if lo < end:
        if held == 0 and ranges:  # a quiet tail joins the last range
            last = ranges.pop()
            ranges.append(Range(last.start, end, last.candidates))
        else:
            ranges.append(Range(lo, end, held))
    return ranges


def _split(at: datetime, count: int, target: int, seconds: int) -> list[Range]:
    parts = min(-(-count // target), seconds)
    edges = [at + timedelta(seconds=i * seconds // parts) for i in range(parts + 1)]
    share, extra = divmod(count, parts)
    return [Range(edges[i], edges[i + 1], share + (1 if i < extra else 0)) for i in range(parts)]
