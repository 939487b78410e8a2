"""The manifest's reference server: the smallest aiohttp application that answers the same
bytes from memory, on the same aiohttp and Python, in one process like ``gomoku-archive serve``.

``python -m tests.benchmarks.manifest_reference --port P --body FILE``"""

from __future__ import annotations

import argparse
from pathlib import Path

from aiohttp import web


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--body", type=Path, required=True)
    args = parser.parse_args()
    body = args.body.read_bytes()

    async def manifest(request: web.Request) -> web.Response:
        return web.Response(body=body, content_type="application/json", charset="utf-8")

    app = web.Application()
    app.router.add_get("/api/v1/database", manifest)
    web.run_app(app, host="127.0.0.1", port=args.port, print=None)


if __name__ == "__main__":
    main()
