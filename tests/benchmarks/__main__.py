"""``python -m tests.benchmarks [--size smoke|full] [--only http,export,verify] [--out DIR]``.

A full run writes ``results.json`` and ``RESULTS.md`` in ``tests/benchmarks/`` unless ``--out``
says elsewhere; a smoke run writes them only under ``--out`` (by default a temporary directory),
so CI never overwrites the recorded results."""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any, cast

from .figures import Figure, Section, Size
from .machine import describe, load_average
from .report import merge_json, render_markdown, table
from .support import PG_ADMIN_DSN

SECTIONS = ("http", "export", "verify", "ranges", "assembly", "companion", "pool", "projection")
HERE = Path(__file__).resolve().parent


def available() -> list[str]:
    """The sections whose modules exist (the suite grows one module at a time)."""
    return [s for s in SECTIONS if importlib.util.find_spec(f"{__package__}.{s}") is not None]


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m tests.benchmarks", description=__doc__)
    parser.add_argument("--size", choices=[s.value for s in Size], default=Size.FULL.value)
    parser.add_argument(
        "--only", help=f"comma-separated sections, of {', '.join(available())} (default: all)"
    )
    parser.add_argument("--out", type=Path, help="where results.json and RESULTS.md go")
    args = parser.parse_args(argv)
    chosen = args.only.split(",") if args.only else available()
    unknown = [s for s in chosen if s not in available()]
    if unknown:
        parser.error(f"no such section: {', '.join(unknown)} (there are: {', '.join(available())})")
    args.sections = chosen
    return args


def run_section(
    name: str, size: Size, results: dict[str, Any]
) -> tuple[list[Figure], dict[str, Any]]:
    """One section; one that reads the others' figures (``READS_RESULTS``, the projection) is
    given this run's entries so far."""
    module = importlib.import_module(f"{__package__}.{name}")
    machine = describe(PG_ADMIN_DSN)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix=f"bench-{name}-") as workdir:
        if getattr(module, "READS_RESULTS", False):
            figures: list[Figure] = module.run(size, Path(workdir), results)
        else:
            figures = cast(Section, module).run(size, Path(workdir))
    entry = {
        "size": size.value,
        "seconds": time.monotonic() - started,
        "machine": machine,
        "load_average_at_end": load_average(),
        "figures": [f.to_json() for f in figures],
    }
    return figures, entry


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    size = Size(args.size)
    out: Path = args.out or (HERE if size is Size.FULL else Path(tempfile.mkdtemp("-bench")))
    out.mkdir(parents=True, exist_ok=True)
    figures: list[Figure] = []
    entries: dict[str, dict[str, Any]] = {}
    failed = []
    for name in args.sections:
        print(f"== {name} ({size.value}), load average {load_average()}", flush=True)
        try:
            found, entries[name] = run_section(name, size, entries)
        except Exception:
            traceback.print_exc()
            failed.append(name)
            continue
        figures += found
    print()
    print(table(figures))
    document = merge_json(out / "results.json", entries)
    markdown = out / "RESULTS.md"
    previous = markdown.read_text() if markdown.exists() else None
    markdown.write_text(render_markdown(document, previous))
    met = sum(f.met for f in figures)
    print(f"\n{met} of {len(figures)} targets met; written to {out}/results.json and RESULTS.md")
    if failed:
        print(f"sections that failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
