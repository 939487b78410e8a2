"""Job names and ids of the archive worker, shared by everything that enqueues or inspects jobs
(the worker, ``/ops/``, the CLI), so none of them imports another. The ids make enqueueing
idempotent; docs/operators/running.md ("Job ids") lists them. Pure."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

from gomoku_archive.errors import InvalidMonth
from gomoku_archive.profile.months import Month

EXPORT_FUNCTION = "export_month"
"""A month's build: plans its ranges, coordinates them, assembles and publishes the file."""
MIRROR_FUNCTION = "mirror_archive"
COMPANION_FUNCTION = "build_companion"
"""The Parquet companion of an archive published without one (before companions existed, or
whose companion failed in its build), from the stored archive."""
PLANNER_FUNCTION = "plan_months"
PLANNER_CRON_NAME = "cron:" + PLANNER_FUNCTION
"""The name arq gives the planner's cron job (and the prefix of its job ids)."""
SCRUB_FUNCTION = "scrub_mirror"
SCRUB_CRON_NAME = "cron:" + SCRUB_FUNCTION
CHECK_FUNCTION = "check_mirror"
CHECK_CRON_NAME = "cron:" + CHECK_FUNCTION
"""The periodic cheap check (HEAD) of every redirect target."""
CONTENT_CHECK_FUNCTION = "check_mirror_content"
CONTENT_CHECK_CRON_NAME = "cron:" + CONTENT_CHECK_FUNCTION
"""The periodic check of a window of every redirect target's bytes."""

JobKind = Literal["export", "mirror", "companion", "planner", "scrub", "check", "other"]

_EXPORT_RE = re.compile(r"export:(\d{4}-\d{2})(?::force:(\d{8}T\d{6}\.\d{3}Z))?")
_MIRROR_RE = re.compile(r"mirror:([1-9]\d{0,18})")
_COMPANION_RE = re.compile(r"companion:([1-9]\d{0,18})")


@dataclass(frozen=True, slots=True)
class JobRef:
    """What a job id says about its job."""

    kind: JobKind
    month: Month | None = None
    forced: bool = False
    archive_id: int | None = None


def export_job_id(month: Month) -> str:
    """The planner's id for ``month``'s export."""
    return f"export:{month}"


def forced_export_job_id(month: Month, requested_at: datetime) -> str:
    """The id of a forced rebuild of ``month`` requested at ``requested_at`` (ms precision)."""
    utc = requested_at.astimezone(UTC)
    stamp = f"{utc:%Y%m%dT%H%M%S}.{utc.microsecond // 1000:03d}Z"
    return forced_export_prefix(month) + stamp


def forced_export_arguments(month: Month, reason: str | None) -> dict[str, str | bool]:
    """The keyword arguments of a forced rebuild's ``export_month`` job (primitives, JSON).
    ``reason`` (see ``jobs.rebuild_reason``) only when one was given, so that a rebuild
    without one still runs on a worker of a release before reasons existed."""
    arguments: dict[str, str | bool] = {"month": str(month), "force": True}
    if reason is not None:
        arguments["reason"] = reason
    return arguments


def forced_export_prefix(month: Month) -> str:
    """What every forced rebuild id of ``month`` starts with."""
    return f"export:{month}:force:"


def mirror_job_id(archive_id: int) -> str:
    if archive_id < 1:
        raise ValueError(f"archive ids start at 1, got {archive_id}")
    return f"mirror:{archive_id}"


def companion_job_id(archive_id: int) -> str:
    """The companion of archive ``archive_id``: one job per archive."""
    if archive_id < 1:
        raise ValueError(f"archive ids start at 1, got {archive_id}")
    return f"companion:{archive_id}"


def parse_job_id(job_id: str) -> JobRef:
    """Read a job id back; ids this service did not make are ``other``."""
    if m := _EXPORT_RE.fullmatch(job_id):
        try:
            month = Month.parse(m.group(1))
        except InvalidMonth:
            return JobRef("other")
        return JobRef("export", month=month, forced=m.group(2) is not None)
    if m := _MIRROR_RE.fullmatch(job_id):
        return JobRef("mirror", archive_id=int(m.group(1)))
    if m := _COMPANION_RE.fullmatch(job_id):
        return JobRef("companion", archive_id=int(m.group(1)))
    if job_id == PLANNER_CRON_NAME or job_id.startswith(PLANNER_CRON_NAME + ":"):
        return JobRef("planner")
    if job_id == SCRUB_CRON_NAME or job_id.startswith(SCRUB_CRON_NAME + ":"):
        return JobRef("scrub")
    for cron_name in (CHECK_CRON_NAME, CONTENT_CHECK_CRON_NAME):
        if job_id == cron_name or job_id.startswith(cron_name + ":"):
            return JobRef("check")
    return JobRef("other")


def export_month_of(job_id: str) -> Month | None:
    """The month an export job id is about (normal or forced), else None."""
    ref = parse_job_id(job_id)
    return ref.month if ref.kind == "export" else None
