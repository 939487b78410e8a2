"""A forced rebuild's reason as it is kept: one line of plain text, 200 characters at most."""

from __future__ import annotations

import re

import pytest

from gomoku_archive.errors import InvalidRebuildReason
from gomoku_archive.jobs.ids import forced_export_arguments
from gomoku_archive.jobs.rebuild_reason import MAX_REASON_CHARS, rebuild_reason
from gomoku_archive.profile.months import Month


@pytest.mark.parametrize(
    ("given", "kept"),
    [
        (None, None),
        ("", None),
        ("  \n\t ", None),
        ("scores fixed", "scores fixed"),
        ("  two\r\nlines,\ttabbed  ", "two lines, tabbed"),
        # Plain text, kept as typed: every page and document escapes it where it shows it.
        ('12 <b>games</b> & "quotes"', '12 <b>games</b> & "quotes"'),
        ("Ünïcode 五目 ok", "Ünïcode 五目 ok"),
        ("x" * MAX_REASON_CHARS, "x" * MAX_REASON_CHARS),
        ("  " + "y" * MAX_REASON_CHARS + "  ", "y" * MAX_REASON_CHARS),
        ("non\u00a0breaking", "non breaking"),
    ],
)
def test_reasons_are_kept_as_one_line(given: str | None, kept: str | None) -> None:
    assert rebuild_reason(given) == kept


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ("z" * (MAX_REASON_CHARS + 1), "at most 200 characters, got 201"),
        ("bell\x07", "character 5 is a control character (U+0007)"),
        ("evil\u202etxt.exe", "direction override"),
        ("zero\u200bwidth", "U+200B"),
        ("lone \udcff byte", "bytes that are not text"),
        ("private \ue000", "private-use"),
        ("unassigned \U000e0fff", "unassigned"),
    ],
)
def test_reasons_that_are_not_plain_text_are_refused(given: str, message: str) -> None:
    with pytest.raises(InvalidRebuildReason, match=re.escape(message)):
        rebuild_reason(given)
    assert InvalidRebuildReason.exit_code == 2


def test_the_job_carries_a_reason_only_when_one_was_given() -> None:
    """A rebuild without a reason keeps the arguments of earlier releases, whose workers
    would refuse an unknown one."""
    assert forced_export_arguments(Month(2026, 8), None) == {"month": "2026-08", "force": True}
    assert forced_export_arguments(Month(2026, 8), "why") == {
        "month": "2026-08",
        "force": True,
        "reason": "why",
    }
