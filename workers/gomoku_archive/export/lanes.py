"""Steps run on a connection the caller holds and on up to a few more from a pool, at once:
the month's reads in one snapshot (``month_reads``) and the copies and checks of a joined file
(``joined_file``). The held connection takes steps too, and every step that no pool
connection comes for: a pool that has nothing to give (a small one, or one another build
holds) slows the work down but never stops it. A connection that is given only after the
steps are all taken is given back unused."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager, nullcontext
from typing import TypeVar

from gomoku_archive.db.pool import Connection, Pool

T = TypeVar("T")

Opening = Callable[[Connection], AbstractAsyncContextManager[object]]
"""What a pool connection enters before its first step (a transaction in a shared snapshot)."""


async def in_lanes(
    first: Connection,
    pool: Pool,
    steps: Sequence[Callable[[Connection], Awaitable[T]]],
    *,
    lanes: int,
    opening: Opening | None = None,
) -> list[T]:
    """Every step's result, in order, the steps run on ``first`` and on up to ``lanes - 1``
    connections of ``pool`` (each inside ``opening`` when given). A step that fails fails the
    whole: the others are cancelled and its error raised."""
    results: dict[int, T] = {}
    queue = deque(enumerate(steps))
    working: set[asyncio.Task[None]] = set()

    async def drain(conn: Connection) -> None:
        while queue:
            index, step = queue.popleft()
            results[index] = await step(conn)

    async def helper() -> None:
        async with pool.acquire() as conn:
            if not queue:
                return
            task = asyncio.current_task()
            assert task is not None
            working.add(task)
            async with opening(conn) if opening is not None else nullcontext():
                await drain(conn)

    helpers = [asyncio.create_task(helper()) for _ in range(min(lanes, len(steps)) - 1)]
    try:
        await drain(first)
        for task in helpers:
            if task not in working:
                task.cancel()  # still waiting for a connection: every step is taken
        outcomes = await asyncio.gather(*helpers, return_exceptions=True)
    except BaseException:
        for task in helpers:
            task.cancel()
        await asyncio.gather(*helpers, return_exceptions=True)
        raise
    for task, outcome in zip(helpers, outcomes, strict=True):
        if task in working and isinstance(outcome, BaseException):
            raise outcome
    return [results[i] for i in range(len(steps))]
