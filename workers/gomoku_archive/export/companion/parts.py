"""A range's companion part: the range's row group of the month's companion, encoded by the
range itself (in parallel with the other ranges, on whichever process runs it) from the lines
it writes, and stored beside its deflate part under its claim's attempt: the group's bytes in
256 KiB segments (``companion_parts``), its one-group file's footer beside them
(``companion_part_footers``). The month's coordinator then only joins them
(``export.companion.build``): a footer, and the segments copied inside PostgreSQL.

A companion that fails never holds its archive back: a range whose rows cannot be made or
encoded logs it and stores no footer, the month is published without a companion (the
coordinator finds the part missing), and the worker's ``build_companion`` makes it later from
the stored archive."""

from __future__ import annotations

import functools

from gomoku_archive.companion.footer import split
from gomoku_archive.db import companion_store
from gomoku_archive.db.pool import Connection
from gomoku_archive.db.range_store import RangeClaim
from gomoku_archive.export.companion.file_writer import GroupRows, encode_in_thread
from gomoku_archive.logs import get_logger
from gomoku_archive.storage.chunks import SegmentWriter

log = get_logger(__name__)


class RangePart:
    """A range's rows in (``write``: each batch of its lines, in order), its part out
    (``store``, once the range is read)."""

    def __init__(self) -> None:
        self._rows = GroupRows()
        self._failure: str | None = None
        self.encode_seconds = 0.0
        """The encoding's CPU time (its thread's)."""

    @property
    def rows(self) -> int:
        return self._rows.rows

    def write(self, lines: list[str]) -> None:
        if self._failure is not None:
            return
        try:
            self._rows.add(lines)
        except Exception as exc:  # the companion's, not the archive's: see the module
            self._fail(exc)

    def _fail(self, exc: Exception) -> None:
        self._failure = f"{type(exc).__name__}: {exc}"
        self._rows = GroupRows()  # its rows let go

    async def store(self, conn: Connection, claim: RangeClaim, *, games: int) -> None:
        """Encode the group (in the encoding thread: the event loop keeps the range's
        heartbeat) and store it under ``claim``. A range without games has no part, nor one
        whose rows failed or are not its ``games`` (logged)."""
        if not games:
            return
        data = await self._encoded(games)
        if data is None:
            log.error(
                "export_companion_part_failed",
                month=claim.month,
                archive_id=claim.archive_id,
                range=claim.seq,
                attempt=claim.attempt,
                error=self._failure,
            )
            return
        part = split(data)
        segments = SegmentWriter(functools.partial(companion_store.write_part, conn, claim))
        await segments.add(part.body)
        await segments.flush(final=True)
        await companion_store.write_part_footer(
            conn, claim, rows=games, body_bytes=len(part.body), footer=part.footer
        )

    async def _encoded(self, games: int) -> bytes | None:
        if self._failure is None and self.rows != games:
            self._failure = f"{self.rows} rows for {games} games"
        if self._failure is None:
            try:
                data, self.encode_seconds = await encode_in_thread(self._rows)
                return data
            except Exception as exc:  # the companion's, not the archive's: see the module
                self._fail(exc)
        return None
