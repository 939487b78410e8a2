import pytest

from gomoku_archive.worker.timeouts import (
    EXPORT_CEILING_SECONDS,
    MAX_SECONDS,
    MIN_SECONDS,
    export_timeout,
)


@pytest.mark.parametrize(
    ("candidates", "seconds"),
    [
        (0, 300.0),  # an empty month still connects, counts and publishes
        (1, 300.0 + 3 / 2000),
        (2_000, 303.0),  # one second of work at the assumed rate, times three
        (100_000, 450.0),
        (1_000_000, 1_800.0),
        (13_800_000, 21_000.0),
        (14_200_000, 21_600.0),  # clamped at six hours
        (10**9, 21_600.0),
    ],
)
def test_timeout_grows_with_the_month(candidates: int, seconds: float) -> None:
    assert export_timeout(candidates) == pytest.approx(seconds)


def test_limits() -> None:
    assert MIN_SECONDS <= export_timeout(0) <= export_timeout(10**7) <= MAX_SECONDS
    # arq's own per-function timeout must never fire before the month's limit.
    assert EXPORT_CEILING_SECONDS > MAX_SECONDS


def test_negative_counts_are_a_bug() -> None:
    with pytest.raises(ValueError, match="candidates"):
        export_timeout(-1)
