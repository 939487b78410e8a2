"""The ``/ops/`` application state: the operator token, the settings and a Redis client that
is opened on first use and tolerates Redis being down (the public API never needs Redis)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from aiohttp import web
from arq.connections import ArqRedis

from gomoku_archive.errors import RedisUnavailable
from gomoku_archive.queue.connection import REDIS_ANSWER_SECONDS, connect
from gomoku_archive.settings import Settings
from gomoku_archive.web.ops.throttle import SignInThrottle


class LazyQueueClient:
    """One arq client for the process, connected when an operator first needs it; a failed
    connect is retried on the next request instead of failing the app's start-up."""

    def __init__(self, redis_url: str) -> None:
        self._url = redis_url
        self._client: ArqRedis | None = None
        self._lock = asyncio.Lock()

    async def get(self) -> ArqRedis:
        """The client; raises ``RedisUnavailable`` when Redis does not answer within
        ``REDIS_ANSWER_SECONDS`` (waiting behind another request's connect included)."""
        try:
            async with asyncio.timeout(REDIS_ANSWER_SECONDS), self._lock:
                if self._client is None:
                    self._client = await connect(self._url)
                return self._client
        except TimeoutError as exc:
            raise RedisUnavailable(
                f"Redis did not answer within {REDIS_ANSWER_SECONDS:.0f} s"
            ) from exc

    async def close(self) -> None:
        async with self._lock:
            if self._client is not None:
                await self._client.aclose(close_connection_pool=True)
                self._client = None


@dataclass(frozen=True)
class OpsState:
    settings: Settings
    token: str
    queue: LazyQueueClient = field(repr=False)
    throttle: SignInThrottle = field(default_factory=SignInThrottle, repr=False)
    """Wrong tokens per client: 429 after a few a minute."""


OPS = web.AppKey("ops", OpsState)
