"""``gomoku-archive serve``: the public HTTP API and pages (aiohttp), until SIGINT or SIGTERM,
which finish in-flight requests (up to a timeout) before closing the pool. Registered with the
program through the ``gomoku_archive.commands`` entry points in ``pyproject.toml``."""

from __future__ import annotations

import argparse
import os

from aiohttp import web

from gomoku_archive.cli.runtime import load_settings, port_arg
from gomoku_archive.errors import ArchiveError
from gomoku_archive.logs import get_logger
from gomoku_archive.web.app import create_app
from gomoku_archive.web.server.shutdown import finish_sending_on_stop

SHUTDOWN_TIMEOUT_SECONDS = 30.0
"""How long running downloads may continue after a stop signal before they are cut."""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "serve",
        help="serve the public API and database pages",
        description="Runs the API: the manifest, downloads, lists and feed under "
        "/api/v1/database/, the public pages under /database/, /ops/ when OPS_TOKEN is set, "
        "and the health and metrics routes. Needs DATABASE_URL.",
    )
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=port_arg, default=8080, help="TCP port (default 8080)")
    p.set_defaults(run=cmd_serve)


def cmd_serve(args: argparse.Namespace) -> int:

    settings = load_settings(log_to_stdout=True)
    log = get_logger(__name__)

    def announce(message: str) -> None:
        log.info("serve_listening", host=args.host, port=args.port)

    app = create_app(settings)
    finish_sending_on_stop(app, timeout=SHUTDOWN_TIMEOUT_SECONDS)
    try:
        web.run_app(
            app,
            host=args.host,
            port=args.port,
            shutdown_timeout=SHUTDOWN_TIMEOUT_SECONDS,
            access_log=None,  # gomoku_archive.web.middleware writes the one line per request
            print=announce,
        )
    except OSError as exc:
        # Database failures at start-up arrive as DatabaseUnavailable (create_pool and the
        # manifest cache translate them); a bare OSError here is the listening socket's.
        reason = os.strerror(exc.errno) if exc.errno else str(exc)
        raise ArchiveError(f"cannot listen on {args.host}:{args.port}: {reason}") from exc
    log.info("serve_stopped")
    return 0
