"""``gomoku-archive demo``'s options and default data folder (no servers started here)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gomoku_archive.cli.demo_cmd import DEFAULT_GAMES_PER_MONTH, default_data_dir
from gomoku_archive.cli.main import build_parser


def test_data_folder_follows_xdg_data_home() -> None:
    folder = default_data_dir({"XDG_DATA_HOME": "/srv/data"})
    assert folder == Path("/srv/data/gomoku-archive/demo")


@pytest.mark.parametrize("xdg", [None, "", "relative/path"])
def test_data_folder_falls_back_to_local_share(xdg: str | None) -> None:
    # The XDG spec ignores a relative XDG_DATA_HOME.
    environ = {} if xdg is None else {"XDG_DATA_HOME": xdg}
    expected = Path.home() / ".local" / "share" / "gomoku-archive" / "demo"
    assert default_data_dir(environ) == expected


def test_defaults() -> None:
    args = build_parser().parse_args(["demo"])
    assert (args.data, args.port, args.games_per_month) == (None, 8080, DEFAULT_GAMES_PER_MONTH)


def test_options() -> None:
    args = build_parser().parse_args(
        ["demo", "--data", "/tmp/d", "--port", "9090", "--games-per-month", "10"]
    )
    assert (args.data, args.port, args.games_per_month) == (Path("/tmp/d"), 9090, 10)


def test_bad_port_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        build_parser().parse_args(["demo", "--port", "70000"])
    assert exit_info.value.code == 2
    assert "port must be 0..65535" in capsys.readouterr().err
