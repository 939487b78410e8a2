"""The install line a missing extra's error gives: from where pip says this copy came."""

from __future__ import annotations

import pytest

from gomoku_archive.cli.install_hint import install_line

WHEEL = "https://gomokuparty.com/database/tools/gomoku_party_archive-1.0.0-py3-none-any.whl"


@pytest.mark.parametrize(
    ("direct_url", "line"),
    [
        (None, "pip install 'gomoku-party-archive[server]'"),
        ({}, "pip install 'gomoku-party-archive[server]'"),
        (
            {"url": WHEEL, "archive_info": {"hashes": {"sha256": "00"}}},
            f"pip install 'gomoku-party-archive[server] @ {WHEEL}'",
        ),
        (
            {"url": "file:///tmp/dist/gomoku_party_archive-1.0.0-py3-none-any.whl",
             "archive_info": {}},
            "pip install 'gomoku-party-archive[server] @ "
            "file:///tmp/dist/gomoku_party_archive-1.0.0-py3-none-any.whl'",
        ),
        (
            {"url": "file:///home/me/gomoku%20archive", "dir_info": {"editable": True}},
            "pip install -e '/home/me/gomoku archive[server]'",
        ),
        (
            {"url": "file:///home/me/checkout", "dir_info": {}},
            "pip install '/home/me/checkout[server]'",
        ),
    ],
)  # fmt: skip
def test_the_line_installs_the_extra_from_where_this_copy_came(
    direct_url: dict[str, object] | None, line: str
) -> None:
    assert install_line("server", direct_url) == line


def test_the_demo_extra_is_named_too() -> None:
    assert install_line("demo", {"url": WHEEL}) == (
        f"pip install 'gomoku-party-archive[demo] @ {WHEEL}'"
    )
