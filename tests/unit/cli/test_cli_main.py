"""The program loads only the module of the command it runs: a downloader's `verify` or
`sgf check` never pays for the database, queue and S3 stacks."""

from __future__ import annotations

import argparse
import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

from gomoku_archive.cli.main import build_parser, command_modules, main
from gomoku_archive.runtime import missing_table_advice
from tests.support import settings_read

ROOT = Path(__file__).resolve().parents[3]
"""The checkout, where the editable install of the test run comes from."""

HEAVY = ("asyncpg", "redis", "arq", "boto3", "aiohttp")


@pytest.mark.slow  # a fresh interpreter per command
@pytest.mark.parametrize(
    "argv", [["verify", "--help"], ["sgf", "check", "--help"], ["games", "--help"]]
)
def test_downloader_commands_load_no_server_stack(argv: list[str]) -> None:
    code = (
        "import sys\n"
        "from gomoku_archive.cli.main import main\n"
        "try:\n"
        f"    main({argv!r})\n"
        "except SystemExit:\n"
        "    pass\n"
        f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_each_entry_point_names_every_command_its_module_adds() -> None:
    for module, names in command_modules().items():
        parser = build_parser(names[0])
        choices = parser._subparsers._group_actions[0].choices  # type: ignore[union-attr]
        assert sorted(choices) == sorted(names), module


def test_the_top_level_help_lists_every_command() -> None:
    choices = build_parser()._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    assert sorted(choices) == sorted(n for names in command_modules().values() for n in names)


def test_each_process_owns_its_command() -> None:
    """Each command lives beside what it runs: serve with the front end (services/), worker and
    export with the worker and the export (workers/), the rest in the shared command line."""
    owners = {name: module for module, names in command_modules().items() for name in names}
    assert owners["serve"] == "gomoku_archive.web.serve_cmd"
    assert owners["worker"] == "gomoku_archive.worker.worker_cmd"
    assert owners["export"] == "gomoku_archive.export.export_cmd"
    assert all(
        m.startswith("gomoku_archive.cli.")
        for n, m in owners.items()
        if n not in ("serve", "worker", "export")
    )


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out.startswith("gomoku-archive ")


def test_the_main_help_names_every_setting() -> None:
    read = settings_read()
    assert {"DATABASE_URL", "OPS_TOKEN", "S3_PART_SIZE", "PUBLIC_BASE_URL"} <= read
    help_text = build_parser().format_help()
    assert sorted(name for name in read if name not in help_text) == []


@pytest.mark.parametrize(
    ("error", "advice"),
    [
        ('relation "archives" does not exist', "run `gomoku-archive migrate` first"),
        ('relation "public.archive_chunks" does not exist', "run `gomoku-archive migrate`"),
        ('relation "nosuch" does not exist', "check GAMES_TABLE"),
        ('relation "src.games" does not exist', "check GAMES_TABLE"),
    ],
)
def test_a_missing_table_gets_the_right_advice(error: str, advice: str) -> None:
    text = missing_table_advice(error)
    assert advice in text
    if "GAMES_TABLE" in advice:
        assert "migrate" not in text, "migrate never creates the game server's table"


def test_every_command_and_option_is_described() -> None:
    import argparse

    missing = []

    def walk(parser: argparse.ArgumentParser, path: str) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                described = {choice.dest: choice.help for choice in action._choices_actions}
                for name, sub in action.choices.items():
                    if not described.get(name):
                        missing.append(f"{path} {name}")
                    walk(sub, f"{path} {name}")
            elif not action.help:
                missing.append(f"{path} {'/'.join(action.option_strings) or action.dest}")

    walk(build_parser(), "gomoku-archive")
    assert missing == []


def _without(missing: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Command modules load as if the ``missing`` distribution were not installed."""
    real = importlib.import_module

    def fake(name: str, package: str | None = None) -> object:
        if name in ("gomoku_archive.web.serve_cmd", "gomoku_archive.export.export_cmd"):
            raise ModuleNotFoundError(f"No module named {missing!r}", name=missing)
        return real(name, package)

    monkeypatch.setattr(importlib, "import_module", fake)


def test_a_server_command_on_the_light_install_names_its_extra(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _without("aiohttp", monkeypatch)
    assert main(["serve", "--port", "8080"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    # The package is not on the index yet: the line installs the extra from this checkout.
    assert err == [
        "gomoku-archive: error: serve needs the server extra, which is not installed: "
        f"pip install -e '{ROOT}[server]'"
    ]


def test_the_help_of_a_light_install_lists_what_is_missing(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _without("asyncpg.pool", monkeypatch)
    with pytest.raises(SystemExit):
        main(["--help"])
    help_text = capsys.readouterr().out
    assert re.search(r"serve\s+\(not installed: needs the server extra\)", help_text)
    assert re.search(r"verify\s+\w", help_text)


def test_a_missing_module_of_our_own_is_no_missing_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    _without("gomoku_archive." + "nosuch", monkeypatch)  # split: no module path to resolve
    with pytest.raises(ModuleNotFoundError):
        main(["serve"])


def test_every_command_has_a_description_for_its_help() -> None:
    # `gomoku-archive migrate --help` (and manifest, export, jobs, rebuild) printed only usage.
    parser = build_parser()
    [commands] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    missing = [name for name, sub in commands.choices.items() if not (sub.description or "")]
    assert missing == []


@pytest.mark.parametrize(
    ("flag", "given", "taken"),
    [
        ("--termination", "five", "FIVE"),
        ("--termination", "Timeout", "TIMEOUT"),
        ("--result", "BLACK", "black"),
        ("--result", "Draw", "draw"),
    ],
)
def test_filter_values_are_case_insensitive(flag: str, given: str, taken: str) -> None:
    args = build_parser("games").parse_args(["games", "x.sgf.gz", flag, given])
    assert getattr(args, flag.removeprefix("--")) == [taken]


def test_the_demo_on_a_light_install_names_the_demo_extra(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The demo needs its own extra (embedded servers, and the server extra with it), not the
    server extra its first failed import belongs to."""
    real = importlib.import_module

    def fake(name: str, package: str | None = None) -> object:
        if name == "gomoku_archive.cli.demo_cmd":
            raise ModuleNotFoundError("No module named 'asyncpg'", name="asyncpg")
        return real(name, package)

    monkeypatch.setattr(importlib, "import_module", fake)
    assert main(["demo"]) == 2
    assert capsys.readouterr().err.strip() == (
        "gomoku-archive: error: demo needs the demo extra, which is not installed: "
        f"pip install -e '{ROOT}[demo]'"
    )
