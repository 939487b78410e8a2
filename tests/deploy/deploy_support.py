"""What the deployment tests share: the repository's paths, the tools installed with the dev
extra, and the names the real program accepts (its commands, its settings)."""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from gomoku_archive.cli.main import build_parser
from tests.support import settings_read

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
CHART = ROOT / "helm" / "gomoku-archive"
VENV_BIN = Path(sys.executable).parent

AWS_VARIABLES = frozenset({"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_DEFAULT_REGION"})
"""Read by boto3 itself, not by ``gomoku_archive.settings``."""
S3_VARIABLES = frozenset(
    {"S3_BUCKET", "S3_PREFIX", "S3_ENDPOINT_URL", "S3_REDIRECT", "S3_PART_SIZE", "CDN_BASE_URL"}
)
"""The S3 mirror's settings (being added to ``gomoku_archive.settings`` beside this work)."""


def tool(name: str) -> str:
    """A command-line tool of the dev extra, from this virtualenv (or PATH); fails, never skips."""
    local = VENV_BIN / name
    found = str(local) if local.exists() else shutil.which(name)
    assert found, f"{name} is not installed: run `bash deploy/test.sh` (it installs the dev extra)"
    return found


def run_tool(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args, capture_output=True, text=True, timeout=timeout, check=False, cwd=ROOT
    )


def setting_names() -> frozenset[str]:
    """Every environment variable the program reads: ``Settings.from_env``'s, and boto3's."""
    return settings_read() | S3_VARIABLES | AWS_VARIABLES


def parse_command(argv: Sequence[str]) -> argparse.Namespace:
    """``gomoku-archive`` arguments parsed by the real parser; a usage error fails the test
    with argparse's message instead of exiting."""
    parser = build_parser()
    try:
        return parser.parse_args(list(argv))
    except SystemExit as exc:
        raise AssertionError(f"gomoku-archive rejects {list(argv)}") from exc
