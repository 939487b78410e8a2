"""The downloaders' wheel the API serves under ``/database/tools/`` (``pip install
https://<host>/database/tools/<wheel>`` works before any release): the light wheel, built from
the same source as the service. Found in ``TOOLS_DIR``, else ``<prefix>/share/gomoku-archive/
tools/`` (the image builds it there), else a checkout's ``dist/``, where ``serve`` builds it
when it is missing (``ensure_wheel``)."""

from __future__ import annotations

import hashlib
import importlib.util
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from gomoku_archive.about import version
from gomoku_archive.logs import get_logger
from gomoku_archive.settings import Settings

log = get_logger(__name__)

SHARE_DIR = Path(sys.prefix) / "share" / "gomoku-archive" / "tools"
"""Where an installation keeps the wheel (deploy/Dockerfile builds it into the image here)."""
CHECKOUT = Path(__file__).resolve().parents[3]
"""The source tree's root, when this module runs from one (an editable install)."""
BUILD_TIMEOUT_SECONDS = 300.0


def wheel_name(release: str | None = None) -> str:
    """The wheel's file name for this version (pure Python, any platform)."""
    return f"gomoku_party_archive-{release or version()}-py3-none-any.whl"


@dataclass(frozen=True, slots=True)
class ToolsWheel:
    """The wheel's bytes (a few hundred kB, served from memory), name and checksum."""

    name: str
    data: bytes
    sha256: str
    modified: datetime

    @classmethod
    def read(cls, path: Path) -> ToolsWheel:
        data = path.read_bytes()
        modified = datetime.fromtimestamp(int(path.stat().st_mtime), UTC)
        return cls(path.name, data, hashlib.sha256(data).hexdigest(), modified)


@dataclass
class ToolsShelf:
    """What the app serves under ``/database/tools/``: the wheel found when it started, or
    None."""

    wheel: ToolsWheel | None = None


def candidate_dirs(settings: Settings) -> list[Path]:
    """Where the wheel is looked for, in order."""
    if settings.tools_dir is not None:
        return [settings.tools_dir]
    return [SHARE_DIR, *([CHECKOUT / "dist"] if is_checkout(CHECKOUT) else [])]


def is_checkout(root: Path) -> bool:
    """Whether ``root`` is this project's source tree (its pyproject.toml names it)."""
    try:
        text = (root / "pyproject.toml").read_text(encoding="utf-8")
    except OSError:
        return False
    return 'name = "gomoku-party-archive"' in text


def find_wheel(settings: Settings) -> Path | None:
    name = wheel_name()
    for folder in candidate_dirs(settings):
        if (folder / name).is_file():
            return folder / name
    return None


def source_changed_after(root: Path, instant: float) -> bool:
    """Whether a file the wheel is built from (the three roots, pyproject.toml, README.md) is
    newer than ``instant``: a wheel built before an edit would install yesterday's code."""
    files = [root / "pyproject.toml", root / "README.md"]
    for top in ("shared", "services", "workers"):
        files.extend(p for p in (root / top).rglob("*") if "__pycache__" not in p.parts)
    return any(p.is_file() and p.stat().st_mtime > instant for p in files)


def ensure_wheel(settings: Settings) -> Path | None:
    """The wheel to serve. From a checkout, the wheel in its ``dist/`` (or ``TOOLS_DIR``) is
    built when it is missing or older than the source; None (logged) when there is none."""
    found = find_wheel(settings)
    checkout = is_checkout(CHECKOUT)
    if found is not None and not (
        checkout
        and found.parent == (settings.tools_dir or CHECKOUT / "dist")
        and source_changed_after(CHECKOUT, found.stat().st_mtime)
    ):
        return found
    if not checkout:
        log.warning("tools_wheel_missing", looked_in=[str(d) for d in candidate_dirs(settings)])
        return None
    out = settings.tools_dir or CHECKOUT / "dist"
    # The build backend installed (the dev extra): no download, a second or so. Otherwise pip
    # fetches it into an isolated build environment, as `python -m build` does.
    isolation = [] if importlib.util.find_spec("hatchling") is None else ["--no-build-isolation"]
    command = [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", *isolation]
    try:
        out.mkdir(parents=True, exist_ok=True)
        # Built beside, then renamed: another process starting at the same time (tests, a
        # second demo) reads a whole wheel, the old one or the new one.
        with tempfile.TemporaryDirectory(dir=out, prefix=".build-") as scratch:
            done = subprocess.run(  # noqa: S603 (our interpreter, our source tree)
                [*command, "--wheel-dir", scratch, str(CHECKOUT)],
                capture_output=True,
                text=True,
                timeout=BUILD_TIMEOUT_SECONDS,
                check=False,
            )
            fresh = Path(scratch) / wheel_name()
            if done.returncode != 0 or not fresh.is_file():
                log.warning("tools_wheel_build_failed", error=done.stderr[-2000:])
                return found
            os.replace(fresh, out / wheel_name())
    except (OSError, subprocess.TimeoutExpired) as exc:
        log.warning("tools_wheel_build_failed", error=str(exc))
        return found
    built = out / wheel_name()
    log.info("tools_wheel_built", path=str(built))
    return built
