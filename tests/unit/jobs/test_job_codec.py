"""The JSON codec jobs and results travel in (pure functions of gomoku_archive.queue.connection)."""

from datetime import UTC, datetime

import pytest

from gomoku_archive.errors import ExportFailed
from gomoku_archive.jobs.codec import deserialize, serialize


def test_jobs_round_trip_as_json() -> None:
    job = {
        "t": None,
        "f": "export_month",
        "a": [],
        "k": {"month": "2026-08", "force": True},
        "et": 1,
    }
    raw = serialize(job)
    assert raw.startswith(b"{")
    assert deserialize(raw) == job


def test_a_failed_job_keeps_its_error_as_text() -> None:
    raw = serialize({"s": False, "r": ExportFailed("2026-08: out of order")})
    assert deserialize(raw)["r"] == {"error": "ExportFailed", "message": "2026-08: out of order"}


def test_other_values() -> None:
    raw = serialize({"at": datetime(2026, 8, 1, tzinfo=UTC), "ids": ("a", "b")})
    assert deserialize(raw) == {"at": "2026-08-01T00:00:00+00:00", "ids": ["a", "b"]}
    with pytest.raises(TypeError, match="not a job argument"):
        serialize({"x": object()})


def test_pickles_are_refused() -> None:
    with pytest.raises(ValueError, match="can't decode"):
        deserialize(b"\x80\x04\x95")
    with pytest.raises(ValueError, match="JSON object"):
        deserialize(b"[1, 2]")
