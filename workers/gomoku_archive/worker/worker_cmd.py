"""``gomoku-archive worker``: run the archive worker in the foreground, or (``--check``) ask
whether this host's worker is alive. Registered with the program through the
``gomoku_archive.commands`` entry points in ``pyproject.toml``."""

from __future__ import annotations

import argparse

import redis.exceptions

from gomoku_archive.errors import RedisUnavailable
from gomoku_archive.jobs.liveness import DEFAULT_MAX_AGE
from gomoku_archive.runtime import load_settings, run
from gomoku_archive.settings import mask_url
from gomoku_archive.worker.check import check_worker


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "worker",
        help="run the archive worker (arq) in the foreground",
        description="Plans missing months at start-up and at 00, 06, 12 and 18 UTC, and runs "
        "export jobs. Stop it with SIGTERM or Ctrl-C.",
    )
    p.add_argument(
        "--grace",
        type=int,
        default=25,
        metavar="SECONDS",
        help="on SIGTERM, how long a running export and a running range may go on before they "
        "are cancelled (default 25; keep it below the supervisor's kill timeout)",
    )
    p.add_argument(
        "--stale-after",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="release an export job whose worker died after this long (default 30)",
    )
    p.add_argument("--burst", action="store_true", help="plan, run what is queued, then exit")
    p.add_argument(
        "--check",
        action="store_true",
        help="run no worker: exit 0 when a worker on this machine turned its job loop "
        "recently (its heartbeat file in the temporary directory), 1 when none did; Redis and "
        "PostgreSQL are not asked (a liveness probe)",
    )
    p.add_argument(
        "--max-age",
        type=float,
        default=DEFAULT_MAX_AGE.total_seconds(),
        metavar="SECONDS",
        help="with --check: how long ago the loop may have turned last "
        f"(default {DEFAULT_MAX_AGE.total_seconds():.0f})",
    )
    p.set_defaults(run=cmd_worker)


def cmd_worker(args: argparse.Namespace) -> int:
    if args.check:
        return check_worker(max_age_seconds=args.max_age)
    settings = load_settings(log_to_stdout=True)
    from gomoku_archive.worker.arq_worker import run_worker

    async def main() -> None:
        try:
            await run_worker(
                settings,
                grace_seconds=args.grace,
                stale_after_seconds=args.stale_after,
                burst=args.burst,
            )
        except redis.exceptions.RedisError as exc:
            raise RedisUnavailable(
                f"cannot use Redis at {mask_url(settings.redis_url)}: {exc}"
            ) from exc

    run(main)
    return 0
