"""Entry point of ``gomoku-archive``: builds the parser from the command modules, runs the chosen
command and turns the project's errors into one clear line on stderr and an exit code."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from typing import Protocol

from shared.errors import ArchiveError

# Each module has ``register(subparsers)``, which adds its commands with ``set_defaults(run=...)``.
COMMAND_MODULES = (
    "shared.cli.sgf_cmd",
    "shared.cli.verify_cmd",
    "shared.cli.db_cmds",
    "shared.cli.serve_cmd",
    "shared.cli.worker_cmds",
    "shared.cli.mirror_cmd",
    "shared.cli.demo_cmd",
)


class CommandModule(Protocol):
    def register(self, subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None: ...


class Command(Protocol):
    def __call__(self, args: argparse.Namespace) -> int: ...


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gomoku-archive",
        description="Build, check and serve Gomoku Party's monthly SGF archives.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMAND_MODULES:
        module: CommandModule = importlib.import_module(name)
        module.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    run: Command = args.run
    try:
        return run(args)
    except ArchiveError as exc:
        print(f"gomoku-archive: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("gomoku-archive: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # `gomoku-archive manifest | head` closed our stdout: not an error worth a traceback.
        return 0


if __name__ == "__main__":
    sys.exit(main())
