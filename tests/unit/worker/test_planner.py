import pytest

from gomoku_archive.jobs.planning import PlanAction, plan_action


@pytest.mark.parametrize(
    ("status", "lock_held", "expected"),
    [
        ("not_found", False, "enqueue"),
        ("complete", False, "requeue"),  # a kept failure or skip must not block a new try
        ("queued", False, "already_queued"),
        ("deferred", False, "already_queued"),  # waiting for a retry
        ("in_progress", False, "already_queued"),
        ("not_found", True, "building"),  # exported right now by another process
        ("complete", True, "building"),
        ("queued", True, "already_queued"),
        ("in_progress", True, "already_queued"),
    ],
)
def test_plan_action(status: str, lock_held: bool, expected: PlanAction) -> None:
    assert plan_action(status, lock_held=lock_held) == expected
