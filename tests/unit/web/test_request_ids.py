"""Incoming X-Request-ID values: honoured when they are plain tokens, replaced otherwise."""

from __future__ import annotations

import pytest

from gomoku_archive.web.middleware import request_id_from


@pytest.mark.parametrize("value", ["abc", "trace-1.2:3_x", "A" * 128, "0f" * 16])
def test_plain_ids_are_kept(value: str) -> None:
    assert request_id_from(value) == value


@pytest.mark.parametrize(
    "value", [None, "", "A" * 129, "a b", "x\ny", "<script>", "é", "a/b", '"quoted"']
)
def test_anything_else_gets_a_fresh_id(value: str | None) -> None:
    made = request_id_from(value)
    assert made != value
    assert len(made) == 32
    assert int(made, 16) >= 0


def test_fresh_ids_are_unique_and_a_forked_child_draws_its_own_prefix() -> None:
    from gomoku_archive.web import middleware

    ids = {request_id_from(None) for _ in range(10_000)}
    assert len(ids) == 10_000
    before = request_id_from(None)[:16]
    middleware._REQUEST_IDS._reset()  # what os.register_at_fork runs in a child
    assert request_id_from(None)[:16] != before
