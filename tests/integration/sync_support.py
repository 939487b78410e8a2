"""Helpers of the ``sync`` tests: a TCP proxy that slows the server's bytes down (so a test can
kill a download in its middle, deterministically) and counts the body bytes it passed on, and
``gomoku-archive`` as a subprocess."""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_HEAD_END = b"\r\n\r\n"


class Answer:
    """What the proxy passed on of one answer: when, and how many bytes of its body."""

    def __init__(self) -> None:
        self.head = bytearray()
        self.body = 0
        self.log: list[tuple[float, int]] = []
        """(monotonic time, body bytes passed on until then), after each write."""

    def passed(self, data: bytes) -> None:
        if _HEAD_END not in self.head:
            self.head += data
            end = self.head.find(_HEAD_END)
            if end < 0:
                return
            self.body += len(self.head) - end - len(_HEAD_END)
        else:
            self.body += len(data)
        self.log.append((time.monotonic(), self.body))

    def body_by(self, instant: float) -> int:
        """Body bytes passed on at or before ``instant``."""
        return max((body for at, body in self.log if at <= instant), default=0)


class SlowProxy:
    """Forwards loopback connections to ``upstream_port``, the answers at ``rate`` bytes a
    second in small steps (a tenth of a second's bytes, at most 16 KiB), requests at full speed;
    with ``stall_after``, an answer stops after that many bytes, its connection left open.
    ``answers`` holds one ``Answer`` per connection, in order."""

    def __init__(self, upstream_port: int, *, rate: int, stall_after: int | None = None) -> None:
        self._upstream = upstream_port
        self._rate = rate
        self._stall_after = stall_after
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self.port = 0
        self.answers: list[Answer] = []

    async def __aenter__(self) -> SlowProxy:
        self._server = await asyncio.start_server(self._connection, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self._server.wait_closed()

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self._upstream)
        answer = Answer()
        self.answers.append(answer)
        pumps = [
            asyncio.create_task(self._pump(reader, up_writer, rate=None)),
            asyncio.create_task(self._answer(up_reader, writer, answer)),
        ]
        self._tasks.update(pumps)
        try:
            await asyncio.wait(pumps, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for pump in pumps:
                pump.cancel()
                self._tasks.discard(pump)
            for w in (writer, up_writer):
                w.close()

    @staticmethod
    async def _pump(
        reader: asyncio.StreamReader, writer: asyncio.StreamWriter, *, rate: int | None
    ) -> None:
        block = 16 * 1024
        with contextlib.suppress(ConnectionError):
            while data := await reader.read(block):
                writer.write(data)
                await writer.drain()
                if rate is not None:
                    await asyncio.sleep(len(data) / rate)

    async def _answer(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, answer: Answer
    ) -> None:
        step = max(1, min(16 * 1024, self._rate // 10))
        left = self._stall_after
        with contextlib.suppress(ConnectionError):
            while data := await reader.read(step if left is None else min(step, left)):
                writer.write(data)
                await writer.drain()
                answer.passed(data)
                await asyncio.sleep(len(data) / self._rate)
                if left is not None:
                    left -= len(data)
                    if not left:
                        await asyncio.Event().wait()  # silent from now on, the connection open


@contextlib.asynccontextmanager
async def slow_proxy(
    upstream_port: int, *, rate: int, stall_after: int | None = None
) -> AsyncIterator[SlowProxy]:
    async with SlowProxy(upstream_port, rate=rate, stall_after=stall_after) as proxy:
        yield proxy


def program(python: Path | str = sys.executable) -> list[str]:
    return [str(python), "-m", "gomoku_archive.cli.main"]


async def gomoku_archive(
    *args: str | Path,
    python: Path | str = sys.executable,
    command: Sequence[str] | None = None,
    cwd: Path | None = None,
) -> tuple[int, str, str]:
    """The program (or ``command``) in a subprocess without blocking the loop the server runs
    on: (exit status, stdout, stderr)."""
    argv = [*(command or program(python)), *(str(a) for a in args)]
    proc = await asyncio.create_subprocess_exec(
        *argv, cwd=cwd, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    out, err = await proc.communicate()
    return await proc.wait(), out.decode(), err.decode()


def archives(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.glob("*.sgf.gz"))
