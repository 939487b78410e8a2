"""Slowing down token guessing on ``/ops/``: a client that gave a wrong operator token
``LIMIT`` times within ``WINDOW_SECONDS`` is answered 429 until the oldest of those failures
leaves the window. Pure bookkeeping with an injectable clock; memory is bounded."""

from __future__ import annotations

import time
from collections import OrderedDict, deque
from collections.abc import Callable

LIMIT = 5
WINDOW_SECONDS = 60.0
MAX_CLIENTS = 10_000
"""Clients remembered at once; the one idle longest is forgotten first."""


class SignInThrottle:
    def __init__(
        self,
        *,
        limit: int = LIMIT,
        window: float = WINDOW_SECONDS,
        clock: Callable[[], float] = time.monotonic,
        max_clients: int = MAX_CLIENTS,
    ) -> None:
        self._limit = limit
        self._window = window
        self._clock = clock
        self._max_clients = max_clients
        self._failures: OrderedDict[str, deque[float]] = OrderedDict()

    def retry_after(self, client: str) -> float | None:
        """Seconds ``client`` must wait before its next try, or None when it may try now."""
        failures = self._recent(client)
        if failures is None or len(failures) < self._limit:
            return None
        return max(failures[0] + self._window - self._clock(), 0.0)

    def failed(self, client: str) -> None:
        """Count one wrong token from ``client``."""
        failures = self._recent(client)
        if failures is None:
            failures = self._failures[client] = deque(maxlen=self._limit)
            while len(self._failures) > self._max_clients:
                self._failures.popitem(last=False)
        self._failures.move_to_end(client)
        failures.append(self._clock())

    def _recent(self, client: str) -> deque[float] | None:
        failures = self._failures.get(client)
        if failures is None:
            return None
        horizon = self._clock() - self._window
        while failures and failures[0] <= horizon:
            failures.popleft()
        if not failures:
            del self._failures[client]
            return None
        return failures
