"""The bundled example archive is exactly what the generator, the writer and the stream produce
today, and it passes the verifier. Regenerate it with ``python -m gomoku_archive.demo.examples``."""

from __future__ import annotations

from collections import Counter
from datetime import UTC

from gomoku_archive.demo.examples import (
    EXAMPLE_GAMES,
    EXAMPLE_MONTH,
    EXAMPLES_DIR,
    example_archive,
    example_records,
)
from gomoku_archive.gomoku.game import Termination
from gomoku_archive.gomoku.replay import replay
from gomoku_archive.profile.writer import order_key
from gomoku_archive.verify.archive import ArchiveVerifier
from tests.docs_pages import ROOT, page
from tests.support import bundled_archive_path


def test_the_committed_archive_is_byte_identical_to_a_rebuild() -> None:
    built = example_archive()
    path = bundled_archive_path()
    assert path.name == built.name
    assert path.read_bytes() == built.data
    assert (EXAMPLES_DIR / f"{built.name}.sha256").read_text() == built.checksum_text
    # Exactly one archive and its checksum: a stale one would confuse the docs' command.
    assert sorted(p.name for p in EXAMPLES_DIR.glob("gomoku-party-*")) == [
        built.name,
        f"{built.name}.sha256",
    ]


def test_the_docs_name_the_bundled_archive() -> None:
    """docs/downloaders.md tells a downloader to try `verify` on this file, by its path."""
    path = bundled_archive_path().relative_to(ROOT).as_posix()
    assert f"gomoku-archive verify {path}\n" in page("downloaders.md")


def test_the_committed_archive_verifies() -> None:
    path = bundled_archive_path()
    checksum = (EXAMPLES_DIR / f"{path.name}.sha256").read_bytes()
    verifier = ArchiveVerifier(file_name=path.name, checksum_file=checksum)
    verifier.feed(path.read_bytes())
    report = verifier.finish()
    assert report.ok, report.problems
    assert report.games == EXAMPLE_GAMES
    assert report.notes == ()


def test_the_games_are_varied_valid_and_reproducible() -> None:
    records = example_records()
    assert records == example_records()
    assert len(records) == EXAMPLE_GAMES
    assert len({r.game_id for r in records}) == EXAMPLE_GAMES
    assert set(Counter(r.termination for r in records)) == set(Termination)
    assert all(replay(r.moves, r.result, r.termination).valid for r in records)
    finished = [order_key(r)[0] for r in records]
    assert all(EXAMPLE_MONTH.start <= f < EXAMPLE_MONTH.end for f in finished)
    spans = [
        r
        for r in records
        if r.started_at.astimezone(UTC).date() != r.finished_at.astimezone(UTC).date()
    ]
    assert len(spans) >= 3
    assert any(r.started_at < EXAMPLE_MONTH.start for r in records)
    assert any(len(r.moves) == 225 for r in records)
    assert any(r.black_rating is None for r in records)
    assert any(r.time_control_seconds is None for r in records)
