"""A demo knows its own servers' addresses in the environment (an earlier run's export lines)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gomoku_archive.demo.own_servers import is_own, remember, socket_path

DATA = Path("/var/lib/gomoku-archive/demo")


@pytest.mark.parametrize(
    ("url", "path"),
    [
        (f"postgresql://postgres@/gomoku_archive?host={DATA}/postgres", DATA / "postgres"),
        (
            "postgresql://postgres@/gomoku_archive?host=%2Ftmp%2Fgomoku-demo-pg-1",
            Path("/tmp/gomoku-demo-pg-1"),
        ),
        (f"unix://{DATA}/redis/redis.sock?db=0", DATA / "redis" / "redis.sock"),
        ("postgresql://postgres@127.0.0.1:5432/x", None),
        ("postgresql://postgres@/x?host=db.example", None),
        ("redis://127.0.0.1:6379/0", None),
    ],
)
def test_socket_paths(url: str, path: Path | None) -> None:
    assert socket_path(url) == path


def test_own_addresses(tmp_path: Path) -> None:
    data = tmp_path / "demo"
    data.mkdir()
    inside = f"postgresql://postgres@/gomoku_archive?host={data}/postgres"
    assert is_own(inside, data)
    assert is_own(f"unix://{data}/redis/redis.sock?db=0", data)
    assert not is_own(f"postgresql://postgres@/gomoku_archive?host={tmp_path}/other", data)
    assert not is_own(f"unix://{tmp_path}/demo2/redis.sock", data), "a sibling is not inside"
    tcp = "redis://127.0.0.1:40123/0"  # the Redis of a data folder whose path is too long
    assert not is_own(tcp, data)
    remember(data, {"REDIS_URL": tcp})
    assert is_own(tcp, data)
    assert not is_own("redis://127.0.0.1:6379/0", data)
