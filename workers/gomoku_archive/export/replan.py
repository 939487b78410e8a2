"""What the consistency check decides about a build's done ranges (pure): they are the month's
file only when they are cut by the plan of the check's snapshot AND hold its rows; otherwise the
build's ranges become that plan, keeping each done range whose edges and rows are unchanged.

Why both: the file's bytes depend on the rows and on where the deflate stream restarts (the
range edges). Ranges whose rows all match the snapshot but whose edges come from an earlier
count (rows moved, came or went between the plan's count and the check) give a file that holds
the right games but other bytes than a clean export of the same table, which would plan from
the counts the check sees. So a build is accepted only in the state a clean export would cut
it, and a rebuild of a quiet table is ``unchanged``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from gomoku_archive.export.ranges import Range


class DoneRange(Protocol):
    """A done range as the check sees it (``range_store.RangeRow`` has it)."""

    @property
    def seq(self) -> int: ...

    @property
    def first_second(self) -> datetime: ...

    @property
    def end_second(self) -> datetime: ...

    @property
    def fingerprint(self) -> object:
        """What its own snapshot read (compared for equality only)."""


@dataclass(frozen=True, slots=True)
class Replan:
    """The ranges a build has next: ``plan``, the check's, where ``kept[i]`` is the ``seq`` of
    the done range that stays as range ``i`` (same edges, same rows), None for a range to
    export."""

    plan: tuple[Range, ...]
    kept: tuple[int | None, ...]
    changed: tuple[int, ...]
    """The build's ranges (their ``seq``) whose rows differ from the check's snapshot."""
    moved: bool
    """The check's plan cuts the month elsewhere than the build's ranges."""

    @property
    def to_export(self) -> int:
        return sum(seq is None for seq in self.kept)


def replan(
    ranges: Sequence[DoneRange], seen: Sequence[object], plan: Sequence[Range]
) -> Replan | None:
    """None when the done ``ranges`` (in order) are exactly ``plan``'s edges and each one's
    fingerprint equals ``seen`` (the check's, one per range); else the ranges they become."""
    if len(seen) != len(ranges):
        raise ValueError("one fingerprint per range")
    if not plan:
        raise ValueError("a plan has at least one range")
    same = [r.fingerprint == s for r, s in zip(ranges, seen, strict=True)]
    edges = [(r.first_second, r.end_second) for r in ranges]
    moved = edges != [(p.start, p.end) for p in plan]
    if all(same) and not moved:
        return None
    unchanged = {edge: r.seq for edge, r, ok in zip(edges, ranges, same, strict=True) if ok}
    return Replan(
        plan=tuple(plan),
        kept=tuple(unchanged.get((p.start, p.end)) for p in plan),
        changed=tuple(r.seq for r, ok in zip(ranges, same, strict=True) if not ok),
        moved=moved,
    )
