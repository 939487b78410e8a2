"""Rewrite the bundled example archive and its checksum file:
``python -m gomoku_archive.demo.examples``.

Run it only after a deliberate change to the profile, the stream or the generator; the golden
test then needs the new digest too. Old example archives in this folder are removed.
"""

from __future__ import annotations

from gomoku_archive.demo.examples import EXAMPLES_DIR, example_archive


def main() -> None:
    built = example_archive()
    for old in EXAMPLES_DIR.glob("gomoku-party-*.sgf.gz*"):
        old.unlink()
    (EXAMPLES_DIR / built.name).write_bytes(built.data)
    (EXAMPLES_DIR / f"{built.name}.sha256").write_text(built.checksum_text)
    print(f"{built.name}: {built.games} games, sha256 {built.sha256}")


if __name__ == "__main__":
    main()
