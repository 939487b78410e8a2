"""What a section returns: figures, each our value beside the reference's, measured in the same
run, and the target the ratio must meet. No figure ever fails on an absolute time."""

from __future__ import annotations

import enum
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

Comparison = Literal[">=", "<="]


class Size(enum.Enum):
    """``smoke`` keeps the suite working in CI (seconds, tiny data); ``full`` is the real run."""

    SMOKE = "smoke"
    FULL = "full"


@dataclass(frozen=True, slots=True)
class Figure:
    """One measured line of the table.

    With a reference, ``ratio`` is ``value / reference`` and the target applies to the ratio
    (``>= 0.8``: we reach at least 0.8 times the reference); without one (a memory bound, say),
    the target applies to ``value`` itself."""

    section: str
    name: str
    unit: str
    value: float
    reference: float | None
    reference_name: str | None
    comparison: Comparison
    bound: float
    note: str = ""

    @property
    def ratio(self) -> float | None:
        if self.reference is None:
            return None
        return self.value / self.reference if self.reference else float("inf")

    @property
    def target(self) -> str:
        suffix = " x" if self.reference is not None else f" {self.unit}"
        return f"{self.comparison} {self.bound:g}{suffix}"

    @property
    def met(self) -> bool:
        measured = self.ratio if self.ratio is not None else self.value
        return measured >= self.bound if self.comparison == ">=" else measured <= self.bound

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "ratio": self.ratio, "target": self.target, "met": self.met}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Figure:
        names = cls.__dataclass_fields__
        return cls(**{k: v for k, v in data.items() if k in names})


def compared(
    section: str,
    name: str,
    unit: str,
    value: float,
    reference: float,
    reference_name: str,
    *,
    at_least: float,
    note: str = "",
) -> Figure:
    """A figure whose ratio to a reference measured beside it must be at least ``at_least``."""
    return Figure(section, name, unit, value, reference, reference_name, ">=", at_least, note)


def bounded(section: str, name: str, unit: str, value: float, *, at_most: float) -> Figure:
    """A figure with no reference, bounded above (memory growth, say)."""
    return Figure(section, name, unit, value, None, None, "<=", at_most)


class Section(Protocol):
    """A benchmark section module (``tests/benchmarks/<name>.py``). It creates and drops its
    own PostgreSQL database, keeps its files under ``workdir`` (a fresh temporary directory)
    and starts and stops every server it needs."""

    def run(self, size: Size, workdir: Path) -> list[Figure]: ...
