"""Every option of the downloaders' commands is documented, and every ``games`` filter is
listed where readers look: the parser is the truth, as the settings' drift test holds the
environment to Settings. A filter added to ``games`` once passed every check while three pages
that list the filters stayed stale."""

from __future__ import annotations

import argparse

import pytest

from gomoku_archive.cli.main import build_parser
from gomoku_archive.verify.games_rows import FILTER_OPTIONS
from gomoku_archive.web.pages.database import render_database_page
from tests.docs_pages import page, section

DOWNLOADERS = [("verify",), ("games",), ("sync",), ("sgf", "check")]
NOT_FILTERS = {"-h", "--help", "--format"}


def parser_of(command: tuple[str, ...]) -> argparse.ArgumentParser:
    parser = build_parser(command[0])
    for name in command:
        (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        parser = sub.choices[name]
    return parser


def long_options(command: tuple[str, ...]) -> list[str]:
    return [
        option
        for action in parser_of(command)._actions
        for option in action.option_strings
        if option.startswith("--") and option != "--help"
    ]


def command_row(command: tuple[str, ...]) -> str:
    """The command's row in the command table of docs/operators/running.md."""
    rows = [
        line
        for line in page("operators/running.md").splitlines()
        if line.startswith(f"| `gomoku-archive {' '.join(command)} ")
    ]
    assert len(rows) == 1, command
    return rows[0]


@pytest.mark.parametrize("command", DOWNLOADERS, ids=" ".join)
def test_every_option_is_on_the_downloaders_page_and_in_the_command_table(
    command: tuple[str, ...],
) -> None:
    options = long_options(command)
    assert options or command == ("sgf", "check")
    downloaders = page("downloaders.md")
    assert [o for o in options if f"`{o}" not in downloaders and f" {o}" not in downloaders] == []
    row = command_row(command)
    assert [o for o in options if o not in row] == []


def test_the_filters_are_the_parsers_and_listed_everywhere() -> None:
    filters = [o for o in long_options(("games",)) if o not in NOT_FILTERS]
    assert filters == list(FILTER_OPTIONS)
    reading = section("downloaders.md", "Reading the files")
    rendered = render_database_page(
        {"months": [], "scope": {}, "profile": "p", "license": "l"}
    ).decode()
    for where, text in (
        ("docs/downloaders.md, Reading the files", reading),
        ("the games row of docs/operators/running.md", command_row(("games",))),
        ("/database/", rendered),
    ):
        assert [f for f in filters if f not in text] == [], where
