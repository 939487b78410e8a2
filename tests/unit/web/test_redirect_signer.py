"""When a download tries to sign its redirect, and which failure or success is news
(``SigningStreak``): a table of moments."""

from __future__ import annotations

import pytest

from gomoku_archive.web.redirect_signer import RETRY_PAUSE_SECONDS, SigningStreak

P = RETRY_PAUSE_SECONDS


def test_signing_that_works_is_tried_by_every_download_and_is_no_news() -> None:
    streak = SigningStreak()
    for now in (0.0, 0.1, 0.1, 50.0):
        assert streak.should_try(now)
        assert streak.succeeded(now) is None


@pytest.mark.parametrize(
    ("now", "tries"),
    [
        (1.0 + P / 2, False),  # within the pause: served here at once
        (1.0 + P - 0.01, False),
        (1.0 + P, True),  # the pause is over: one download tries
        (1.0 + 3 * P, True),
    ],
)
def test_after_a_failure_no_download_tries_until_the_pause_is_over(now: float, tries: bool) -> None:
    streak = SigningStreak()
    assert streak.failed(1.0)
    assert streak.should_try(now) is tries


def test_one_download_tries_per_pause_however_many_arrive() -> None:
    streak = SigningStreak()
    streak.failed(0.0)
    assert streak.should_try(P)
    assert [streak.should_try(P + 0.001 * i) for i in range(1, 50)] == [False] * 49
    assert streak.should_try(2 * P), "the next pause's try"


def test_a_streak_is_news_once_when_it_starts_and_once_when_it_ends() -> None:
    streak = SigningStreak()
    assert streak.failed(0.0) is True
    streak.skipped()
    streak.skipped()
    assert streak.should_try(P)
    assert streak.failed(P) is False, "the same streak goes on"
    streak.skipped()
    assert streak.should_try(2 * P + 1)
    assert streak.succeeded(2 * P + 1) == (2 * P + 1, 5), "its length, and downloads served here"
    assert streak.succeeded(2 * P + 2) is None
    assert streak.should_try(2 * P + 2), "no pause once it works"
    assert streak.failed(100.0) is True, "a new streak"
