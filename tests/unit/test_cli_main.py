"""The program loads only the module of the command it runs: a downloader's `verify` or
`sgf check` never pays for the database, queue and S3 stacks."""

from __future__ import annotations

import subprocess
import sys

import pytest

from shared.cli.main import COMMANDS, build_parser

HEAVY = ("asyncpg", "redis", "arq", "boto3", "aiohttp")


@pytest.mark.parametrize("argv", [["verify", "--help"], ["sgf", "check", "--help"]])
def test_downloader_commands_load_no_server_stack(argv: list[str]) -> None:
    code = (
        "import sys\n"
        "from shared.cli.main import main\n"
        "try:\n"
        f"    main({argv!r})\n"
        "except SystemExit:\n"
        "    pass\n"
        f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_the_table_names_every_command_its_module_adds() -> None:
    for module, names in COMMANDS.items():
        parser = build_parser(names[0])
        choices = parser._subparsers._group_actions[0].choices  # type: ignore[union-attr]
        assert sorted(choices) == sorted(names), module


def test_the_top_level_help_lists_every_command() -> None:
    choices = build_parser()._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    assert sorted(choices) == sorted(n for names in COMMANDS.values() for n in names)
