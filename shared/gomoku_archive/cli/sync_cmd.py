"""``gomoku-archive sync DIR [--from YYYY-MM] [--to YYYY-MM] [--base-url URL] [--verify]
[--prune] [--parquet]``: keep a folder equal to the archive, month by month, as a researcher
who downloads every month wants it (with ``--parquet``, each month's Parquet companion too).
The plan is ``catalog.sync_plan``'s, the HTTP ``cli.sync_fetch``'s; this
module does the folder's I/O and prints one line per month.

Safe to interrupt at any point (Ctrl-C, SIGKILL, a dropped connection): a download lives in
``NAME.part`` until its SHA-256 is the manifest's, then is renamed; the next run resumes it.
Exit status: 0 done, 1 a month failed (the others are done), 2 bad input (a month, a folder, a
document that is not the manifest), 3 the service cannot be reached, 130 interrupted."""

from __future__ import annotations

import argparse
import errno
import hashlib
import json
import os
import sys
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urljoin, urlsplit

from rich.progress import (
    BarColumn,
    DownloadColumn,
    Progress,
    TextColumn,
    TimeRemainingColumn,
    TransferSpeedColumn,
)

from gomoku_archive.catalog.sync_plan import (
    PART_SUFFIX,
    REJECTED_DIR,
    SUPERSEDED_DIR,
    MonthPlan,
    NotAManifest,
    RemoteFile,
    Status,
    local_archives,
    local_companions,
    plan,
    read_companions,
    read_manifest,
)
from gomoku_archive.cli.sync_fetch import (
    DiskFull,
    Stopped,
    StopSignal,
    download,
    fetch_manifest,
    parse_json,
)
from gomoku_archive.cli.verify_cmd import verify_file
from gomoku_archive.errors import ArchiveError, ConfigError, DownloadFailed
from gomoku_archive.profile.months import Month
from gomoku_archive.profile.names import CHECKSUM_SUFFIX, checksum_line

DEFAULT_BASE_URL = "https://gomokuparty.com"
MANIFEST_PATH = "/api/v1/database"
PAGE_PATH = "/database/"
SERVICE_PAGES = (PAGE_PATH.rstrip("/"), MANIFEST_PATH)
"""The service's addresses that ``--base-url`` takes for its origin: the public page, what a
user copies from the browser, and the manifest."""
MANIFEST_FILE = "manifest.json"
"""The manifest as last read, kept in the folder (for scripts, and for the next conditional
GET)."""
STATE_FILE = ".gomoku-archive-sync.json"
"""The manifest's address and ETag, for ``If-None-Match`` on the next run."""
DEFAULT_JOBS = 3
MAX_JOBS = 8
_HASH_BLOCK = 1024 * 1024


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "sync",
        help="download every month's archive into a folder, and keep it current",
        description="Mirror the archive into DIR: each month's current file under its own "
        "name with its .sha256 beside it, downloaded only when new or rebuilt, its SHA-256 "
        "checked; files a rebuild superseded move to DIR/superseded/ (or are deleted with "
        "--prune), so DIR/*.sgf.gz holds every game once. One line per month; run it again "
        "every month, or after an interruption: it resumes and fetches nothing twice. Exit "
        "status: 0 done, 1 a month failed, 2 bad input, 3 the service cannot be reached.",
    )
    p.add_argument("folder", metavar="DIR", help="the folder to keep (created if missing)")
    p.add_argument(
        "--from", dest="first", metavar="YYYY-MM", type=_month, help="first month (default: all)"
    )
    p.add_argument("--to", dest="last", metavar="YYYY-MM", type=_month, help="last month")
    p.add_argument(
        "--base-url",
        default=DEFAULT_BASE_URL,
        metavar="URL",
        help=f"the archive service's origin (default {DEFAULT_BASE_URL}); its page's address, "
        f"{DEFAULT_BASE_URL}{PAGE_PATH}, also does",
    )
    p.add_argument(
        "--verify",
        action="store_true",
        help="also check every game of every file, as verify does (the SHA-256 is always checked)",
    )
    p.add_argument(
        "--prune",
        action="store_true",
        help=f"delete superseded files instead of moving them to DIR/{SUPERSEDED_DIR}/",
    )
    p.add_argument(
        "--parquet",
        action="store_true",
        help="also keep each month's Parquet companion (the same games as typed columns), "
        "its SHA-256 checked and its old one set aside as an archive's is",
    )
    p.add_argument(
        "--jobs",
        type=_jobs,
        default=DEFAULT_JOBS,
        metavar="N",
        help=f"downloads at once, 1 to {MAX_JOBS} (default {DEFAULT_JOBS})",
    )
    p.set_defaults(run=cmd_sync)


def _month(text: str) -> Month:
    try:
        return Month.parse(text)
    except ArchiveError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _jobs(text: str) -> int:
    if not (text.isascii() and text.isdigit() and 1 <= int(text) <= MAX_JOBS):
        raise argparse.ArgumentTypeError(f"a whole number from 1 to {MAX_JOBS}, got {text!r}")
    return int(text)


@dataclass
class Outcome:
    """What became of one month."""

    plan: MonthPlan
    parquet: bool = False
    """The month's Parquet companion, not its archive."""
    fetched: int = 0
    games: int | None = None
    moved: list[str] = field(default_factory=list)
    error: str | None = None
    disk_full: bool = False
    """The folder took no more bytes: every other download would fail the same way."""

    def line(self, *, prune: bool) -> str:
        month, status = self.plan.month, self.plan.status
        current = self.plan.current
        if self.error is not None:
            return f"{month}  failed     {self.error}"
        label = "no Parquet" if self.parquet and status is Status.EMPTY else status.value
        words = [f"{month}  {label:<10} {current.name if current else ''}".rstrip()]
        if self.fetched:
            words.append(f"({_size(self.fetched)} downloaded)")
        if self.games is not None:
            words.append(f"verified: {self.games:,} game{'s' if self.games != 1 else ''}")
        if self.moved:
            where = "deleted" if prune else f"moved to {SUPERSEDED_DIR}/"
            words.append(f"[{', '.join(self.moved)} {where}]")
        return " ".join(words)


def cmd_sync(args: argparse.Namespace) -> int:
    if args.first and args.last and args.first > args.last:
        raise ConfigError(f"--from {args.first} is after --to {args.last}")
    base = base_origin(args.base_url)
    folder = Path(args.folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"cannot use {folder} as the folder: {exc.strerror or exc}") from None
    document = _manifest(folder, base + MANIFEST_PATH)
    listing = read_manifest(document)
    names = [p.name for p in folder.iterdir() if p.is_file()]
    plans = [
        (p, False) for p in plan(listing, local_archives(names), first=args.first, last=args.last)
    ]
    if args.parquet:
        companions = plan(
            read_companions(document), local_companions(names), first=args.first, last=args.last
        )
        # Each month's companion right after the month's archive.
        by_month = {p.month: p for p in companions}
        interleaved: list[tuple[MonthPlan, bool]] = []
        for month_plan, _ in plans:
            interleaved.append((month_plan, False))
            if (companion := by_month.pop(month_plan.month, None)) is not None:
                interleaved.append((companion, True))
        plans = interleaved + [(p, True) for p in by_month.values()]
    outcomes = _run(plans, folder, base, args)
    months = [o for o in outcomes if not o.parquet]
    fetched = sum(o.fetched for o in outcomes)
    parts = [_summary(months, "month")]
    if args.parquet:
        parts.append(_summary([o for o in outcomes if o.parquet], "Parquet companion"))
    print(f"{'; '.join(parts)}; {_size(fetched)} downloaded")
    failed = any(o.error for o in outcomes)
    unverified = any(o.games is None for o in months if args.verify and o.plan.current is not None)
    return 1 if failed or (args.verify and unverified) else 0


def _summary(outcomes: list[Outcome], what: str) -> str:
    counts: dict[str, int] = {}
    for outcome in outcomes:
        key = "failed" if outcome.error else outcome.plan.status.value
        if outcome.parquet and outcome.plan.status is Status.EMPTY and not outcome.error:
            key = "without one"
        counts[key] = counts.get(key, 0) + 1
    summary = ", ".join(f"{n} {word}" for word, n in counts.items()) or "nothing to do"
    return f"{len(outcomes)} {what}{'s' if len(outcomes) != 1 else ''}: {summary}"


def base_origin(text: str) -> str:
    """The service's origin (``scheme://host[:port]``) from ``--base-url``: its origin, or the
    address of its page or its manifest, which a user copies from the browser (a trailing
    slash, a query or a ``#month`` fragment or not). The service lives at an origin's root
    (``PUBLIC_BASE_URL`` is one), so any other path is a ``ConfigError`` that says so."""
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ConfigError(f"--base-url must be an http:// or https:// address, got {text!r}")
    origin = f"{parts.scheme}://{parts.netloc}"
    if parts.path.rstrip("/") not in ("", *SERVICE_PAGES):
        raise ConfigError(
            f"--base-url wants the archive service's origin, such as {origin} (no path; its "
            f"page's address, {origin}{PAGE_PATH}, also does), got {text!r}"
        )
    return origin


def _manifest(folder: Path, url: str) -> object:
    """The manifest document: fetched, or the folder's copy when the server says it is
    current (304 to the ETag kept from the last run)."""
    state = _read_state(folder)
    copy = folder / MANIFEST_FILE
    etag = state.get("etag") if state.get("url") == url and copy.is_file() else None
    fetched = fetch_manifest(url, etag if isinstance(etag, str) else None)
    if fetched.body is None:
        return json.loads(copy.read_bytes())
    document = parse_json(fetched.body)
    try:
        read_manifest(document)
    except NotAManifest as exc:
        raise NotAManifest(f"{url} is not a Gomoku Party archive manifest: {exc}") from None
    _write_atomically(copy, fetched.body)
    _write_atomically(folder / STATE_FILE, json.dumps({"url": url, "etag": fetched.etag}).encode())
    return document


def _read_state(folder: Path) -> dict[str, object]:
    try:
        state = json.loads((folder / STATE_FILE).read_bytes())
    except (OSError, ValueError):
        return {}
    return state if isinstance(state, dict) else {}


def _run(
    plans: list[tuple[MonthPlan, bool]], folder: Path, base: str, args: argparse.Namespace
) -> list[Outcome]:
    """Each month's work on a bounded pool of threads; lines printed in month order as soon as
    a month and those before it are done. Ctrl-C stops the downloads at once: their
    connections are shut down, and each part keeps what arrived."""
    stop = StopSignal()
    outcomes: list[Outcome] = []
    with _progress() as bar, ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures: list[Future[Outcome]] = [
            pool.submit(_sync_month, p, parquet, folder, base, args, stop, bar)
            for p, parquet in plans
        ]
        try:
            for future in futures:
                outcome = _wait(future)
                outcomes.append(outcome)
                print(outcome.line(prune=args.prune), flush=True)
                if outcome.disk_full:
                    stop.set()
        except BaseException:
            stop.set()
            for future in futures:
                future.cancel()
            raise
    full = next((o for o in outcomes if o.disk_full), None)
    if full is not None and full.error is not None:
        raise DiskFull(full.error)
    return outcomes


def _wait(future: Future[Outcome]) -> Outcome:
    """The future's result, waiting in short steps so that Ctrl-C reaches the main thread."""
    while True:
        try:
            return future.result(timeout=0.2)
        except FutureTimeout:
            continue


Bar = Callable[[str, int, int], Callable[[int], None]]
"""(label, total, already there) -> a callback taking each block's size."""


@contextmanager
def _progress() -> Iterator[Bar]:
    """Progress bars on a terminal (rich, on stderr); nothing otherwise."""
    if not sys.stderr.isatty():
        yield lambda label, total, done: lambda n: None
        return
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        TimeRemainingColumn(),
    )
    from rich.console import Console

    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:

        def task(label: str, total: int, done: int) -> Callable[[int], None]:
            handle = bar.add_task(label, total=total, completed=done)
            return lambda n: bar.advance(handle, n)

        yield task


def _sync_month(
    month_plan: MonthPlan,
    parquet: bool,
    folder: Path,
    base: str,
    args: argparse.Namespace,
    stop: StopSignal,
    bar: Bar,
) -> Outcome:
    outcome = Outcome(month_plan, parquet)
    current = month_plan.current
    try:
        if current is not None:
            outcome.fetched = _bring(current, folder, base, stop, bar)
            _write_companion(folder, current)
            # verify reads archives; a companion's SHA-256 is checked like every file's.
            if args.verify and not parquet:
                outcome.games = _verify(folder / current.name)
        # Only now, with the current file whole and checked, does the old one leave.
        outcome.moved = _set_aside(folder, month_plan, prune=args.prune)
    except Stopped:
        outcome.error = "stopped (the partial download is kept; the next run resumes it)"
    except DiskFull as exc:
        outcome.error, outcome.disk_full = str(exc), True
    except DownloadFailed as exc:
        outcome.error = str(exc)
    except OSError as exc:  # the folder's own I/O: a rename, a checksum file, verify's read
        outcome.error = f"{exc.filename or folder}: {exc.strerror or exc}"
        if exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
            outcome.error, outcome.disk_full = f"no space left in {folder} ({exc.strerror})", True
    except ArchiveError as exc:
        outcome.error = str(exc)
    return outcome


def _bring(file: RemoteFile, folder: Path, base: str, stop: StopSignal, bar: Bar) -> int:
    """The current file under its name, its SHA-256 checked; returns the bytes downloaded. A
    file already there is hashed again (a copy damaged since the last run is fetched anew and
    the damaged one kept aside)."""
    target = folder / file.name
    if target.is_file():
        if target.stat().st_size == file.size and sha256_of(target) == file.sha256:
            return 0
        _reject(folder, target, file.name + ".local")
    part = folder / (file.name + PART_SUFFIX)
    have = part.stat().st_size if part.exists() else 0
    advance = bar(file.name, file.size, have)
    fetched = download(
        urljoin(base + "/", file.url),
        part,
        size=file.size,
        etag=f'"{file.sha256}"',
        stop=stop,
        progress=advance,
    )
    digest = sha256_of(part)
    if digest != file.sha256:
        kept = _reject(folder, part, file.name)
        raise DownloadFailed(
            f"{file.name}: checksum mismatch (SHA-256 {digest}, the manifest says "
            f"{file.sha256}); the download is kept as {kept.relative_to(folder)}"
        )
    os.replace(part, target)
    _fsync_folder(folder)
    return fetched


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        while block := stream.read(_HASH_BLOCK):
            digest.update(block)
    return digest.hexdigest()


def _reject(folder: Path, path: Path, name: str) -> Path:
    aside = folder / REJECTED_DIR
    aside.mkdir(exist_ok=True)
    kept = aside / name
    os.replace(path, kept)
    return kept


def _write_companion(folder: Path, file: RemoteFile) -> None:
    """``NAME.sha256`` beside the file, as the service serves it (``sha256sum -c`` and
    ``verify`` read it)."""
    path = folder / (file.name + CHECKSUM_SUFFIX)
    line = checksum_line(file.name, file.sha256).encode("ascii")
    if not path.is_file() or path.read_bytes() != line:
        _write_atomically(path, line)


def _verify(path: Path) -> int:
    report = verify_file(path, None, quiet=True)
    if not report.ok:
        first = report.problems[0] if report.problems else None
        detail = f": line {first.line}: {first.message}" if first else ""
        raise DownloadFailed(f"{path.name}: verify found {report.problem_count:,} problems{detail}")
    return report.games


def _set_aside(folder: Path, month_plan: MonthPlan, *, prune: bool) -> list[str]:
    """Move (or delete) the month's stale files and their checksum files; returns the
    archives'."""
    moved = []
    aside = folder / SUPERSEDED_DIR
    for name in month_plan.companions():
        path = folder / name
        if not path.is_file():
            continue
        if prune:
            path.unlink()
        else:
            aside.mkdir(exist_ok=True)
            os.replace(path, aside / name)
        if not name.endswith(CHECKSUM_SUFFIX):
            moved.append(name)
    return moved


def _write_atomically(path: Path, data: bytes) -> None:
    temporary = path.with_name(f".{path.name}.tmp")
    with temporary.open("wb") as out:
        out.write(data)
        out.flush()
        os.fsync(out.fileno())
    os.replace(temporary, path)


def _fsync_folder(folder: Path) -> None:
    """Make a rename durable: after a crash the file is under its new name or its old one."""
    descriptor = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def _size(count: int) -> str:
    for unit, scale in (("GB", 10**9), ("MB", 10**6), ("kB", 10**3)):
        if count >= scale:
            return f"{count / scale:.1f} {unit}"
    return f"{count} bytes"
