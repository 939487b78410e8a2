"""Example budgets for property tests that set their own ``max_examples``.

An explicit ``@settings(max_examples=500)`` overrides every profile, so the quick loop's smaller
profile (tests/conftest.py) could not shrink it. Written ``max_examples=examples(500)``, the
budget keeps its share of the loaded profile's: 500 in a full run (hypothesis's 100 per test),
50 in the quick loop (10 per test)."""

from __future__ import annotations

from hypothesis import settings

FULL = settings.get_profile("default").max_examples
"""Hypothesis's own budget per test, which the full run's profiles (ci, dev) keep."""


def examples(full_run: int) -> int:
    """``full_run`` examples in a full run, the same share of it as the loaded profile's budget
    is of hypothesis's default in any other; never fewer than 1. Call it in the decorator: the
    profile is the one loaded when the test module is imported."""
    return max(1, full_run * settings.default.max_examples // FULL)
