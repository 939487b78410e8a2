"""``gomoku-archive serve``: the public HTTP API and pages (aiohttp), until SIGINT or SIGTERM,
which drain first (``/readyz`` fails, requests are still served for SHUTDOWN_DRAIN_SECONDS),
then let responses in flight finish for at most SHUTDOWN_GRACE_SECONDS before closing the
pool (``web.server.run``). ``serve --check`` is
the image's health check. Registered with the program through the
``gomoku_archive.commands`` entry points in ``pyproject.toml``."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import urllib.error
import urllib.request

from gomoku_archive.errors import ArchiveError
from gomoku_archive.logs import get_logger
from gomoku_archive.runtime import load_settings, port_arg
from gomoku_archive.settings import Settings

CHECK_TIMEOUT_SECONDS = 4.0


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "serve",
        help="serve the public API and database pages",
        description="Runs the API: the manifest, downloads, lists and feed under "
        "/api/v1/database/, the public pages under /database/, /ops/ when OPS_TOKEN is set, "
        "and the health and metrics routes. Needs DATABASE_URL.",
    )
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument(
        "--port", type=port_arg, default=None, help="TCP port (default: PORT, else 8080)"
    )
    p.add_argument(
        "--check",
        action="store_true",
        help="only ask a running API on this machine for /healthz (the image's health check): "
        "exit 0 when it answers 200, else 1",
    )
    p.set_defaults(run=cmd_serve)


def cmd_serve(args: argparse.Namespace) -> int:
    if args.check:
        return check(Settings.from_env(isatty=False), args.port)
    # Here, not at the top: the health check (`--check`) runs every 30 s and needs none of it.
    from gomoku_archive.web.api.health import metrics_app
    from gomoku_archive.web.app import create_app
    from gomoku_archive.web.keys import DRAINING
    from gomoku_archive.web.server.run import CannotListen, Listener, serve
    from gomoku_archive.web.server.shutdown import exit_now
    from gomoku_archive.web.tools_wheel import ensure_wheel

    settings = load_settings(log_to_stdout=True)
    log = get_logger(__name__)
    port: int = settings.port if args.port is None else args.port

    def announce() -> None:
        log.info("serve_listening", host=args.host, port=port, metrics_port=settings.metrics_port)

    ensure_wheel(settings)  # in a checkout, built once into dist/ (about a second)
    app = create_app(settings)
    listeners = [Listener(app, args.host, port)]
    if settings.metrics_port is not None:
        listeners.append(Listener(metrics_app(app), args.host, settings.metrics_port))
    try:
        report = asyncio.run(
            serve(
                listeners,
                drain_seconds=settings.shutdown_drain_seconds,
                grace_seconds=settings.shutdown_grace_seconds,
                announce=announce,
                draining=app[DRAINING],
            )
        )
    except CannotListen as exc:
        reason = os.strerror(exc.errno) if exc.errno else str(exc)
        raise ArchiveError(f"cannot listen on {exc.host}:{exc.port}: {reason}") from exc
    log.info(
        "serve_stopped",
        grace_used_s=report.grace_used_s,
        cut_requests=report.cut_requests,
        cut_connections=report.cut_connections,
    )
    exit_now(0)


def check(settings: Settings, port: int | None) -> int:
    """GET /healthz on this machine's API (PORT, unless --port says otherwise)."""
    url = f"http://127.0.0.1:{settings.port if port is None else port}/healthz"
    try:
        with urllib.request.urlopen(url, timeout=CHECK_TIMEOUT_SECONDS) as response:
            ok = response.status == 200
    except (urllib.error.URLError, OSError) as exc:
        print(f"gomoku-archive: {url}: {exc}", file=sys.stderr)
        return 1
    return 0 if ok else 1
