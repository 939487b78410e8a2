"""The one settings object, read from the environment once at start-up and passed down.
Nothing else in the project reads ``os.environ``."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit, urlunsplit

from gomoku_archive.errors import ConfigError, InvalidMonth
from gomoku_archive.http.origin import IPNetwork, parse_networks
from gomoku_archive.profile.months import Month
from gomoku_archive.profile.vocabulary import FIRST_PUBLISHED_MONTH

DEFAULT_DATABASE_URL = "postgresql://postgres@127.0.0.1:5432/gomoku_archive"
DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}(\.[A-Za-z_][A-Za-z0-9_]{0,62})?")
_SIZE = re.compile(r"([0-9]{1,13})\s*(B|KiB|MiB|GiB)?", re.ASCII)
_SIZE_UNITS = {None: 1, "B": 1, "KiB": 1024, "MiB": 1024**2, "GiB": 1024**3}
_BOOLEANS = {"1": True, "true": True, "yes": True, "on": True}
_BOOLEANS |= {"0": False, "false": False, "no": False, "off": False}

MIB = 1024 * 1024
S3_MIN_PART_SIZE = 5 * MIB
"""S3 refuses multipart parts below 5 MiB (all but the last)."""
S3_MAX_PART_SIZE = 5 * 1024 * MIB
DEFAULT_S3_PART_SIZE = 16 * MIB
DEFAULT_DOWNLOAD_CACHE_BYTES = 4 * 1024 * MIB

_BUCKET = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{1,254}", re.ASCII)

LogFormat = Literal["json", "console"]
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
MIN_OPS_TOKEN_LENGTH = 32
MAX_EXPORT_PROCESSES = 64
DEFAULT_PORT = 8080
DEFAULT_S3_PRESIGN_SECONDS = 3600
S3_MIN_PRESIGN_SECONDS = 60
S3_MAX_PRESIGN_SECONDS = 7 * 24 * 3600
"""SigV4's limit on a presigned URL's life."""
DEFAULT_MIRROR_CHECK_SECONDS = 60
"""A copy gone or changed in a way HEAD sees stays a redirect target about a minute at most."""
MIN_MIRROR_CHECK_SECONDS = 5
MAX_MIRROR_CHECK_SECONDS = 3600
DEFAULT_MIRROR_CONTENT_CHECK_SECONDS = 900
MAX_MIRROR_CONTENT_CHECK_SECONDS = 86400
DEFAULT_MIRROR_CONTENT_SAMPLE_BYTES = MIB
DEFAULT_SHUTDOWN_DRAIN_SECONDS = 15.0
"""Long enough for an Ingress controller to drop a terminating pod's endpoint (docs/operators/
deployment.md, "Rolling updates")."""
MAX_SHUTDOWN_DRAIN_SECONDS = 300.0
DEFAULT_SHUTDOWN_GRACE_SECONDS = 30.0
MAX_SHUTDOWN_GRACE_SECONDS = 3600.0


def parse_size(text: str) -> int:
    """``16777216``, ``16MiB``, ``512 KiB``: a byte count."""
    match = _SIZE.fullmatch(text.strip())
    if match is None:
        raise ValueError(f"{text!r} is not a size like 16777216 or 16MiB")
    return int(match.group(1)) * _SIZE_UNITS[match.group(2)]


def parse_bool(text: str) -> bool:
    try:
        return _BOOLEANS[text.strip().lower()]
    except KeyError:
        raise ValueError(f"{text!r} is not one of true/false, yes/no, on/off, 1/0") from None


def mask_url(url: str) -> str:
    """``url`` with its password replaced by ``***``, for messages and logs."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return urlunsplit(parts._replace(netloc=netloc))


@dataclass(frozen=True, kw_only=True)
class Settings:
    database_url: str = DEFAULT_DATABASE_URL
    source_database_url: str | None = None
    """Where the export reads the game server's table (a read replica, say); None: the
    archive's own ``database_url``."""
    redis_url: str = DEFAULT_REDIS_URL
    games_table: str = "games"
    """The game server's table, optionally schema-qualified; validated as an identifier."""
    export_first_month: Month = FIRST_PUBLISHED_MONTH
    export_processes: int = 2
    """Processes that export the ranges of a month this process coordinates (the ``export``
    command, or a worker's month build), its own included; 1 leaves the other ranges to the
    worker pool (or, for the command, to this process alone)."""
    ops_token: str | None = field(default=None, repr=False)
    """Operator token for /ops/ and its actions; when unset, /ops/ answers 404."""
    s3_bucket: str | None = None
    """The mirror's bucket; mirroring (and redirecting downloads to it) is off when unset.
    Region and credentials come from boto3's standard chain, never from here."""
    s3_prefix: str = ""
    """Key prefix inside the bucket, normalised to end with ``/`` when not empty."""
    s3_endpoint_url: str | None = None
    """An S3-compatible store's endpoint (MinIO, Ceph, R2, ...); AWS when unset."""
    s3_redirect: bool = True
    """Redirect downloads of verified mirrored files to the bucket or CDN; off keeps the
    bucket as a backup copy only."""
    s3_part_size: int = DEFAULT_S3_PART_SIZE
    """Bytes per multipart part: S3's 5 MiB minimum up to 5 GiB."""
    s3_public_endpoint_url: str | None = None
    """The store's endpoint as downloaders reach it, for the presigned URLs of redirects when it
    differs from ``s3_endpoint_url`` (Compose: the host's published port); unset: the same."""
    s3_presign_seconds: int = DEFAULT_S3_PRESIGN_SECONDS
    """How long a redirect's presigned URL stays valid (no CDN)."""
    cdn_base_url: str | None = None
    """Public base URL of the bucket's root behind a CDN, for redirects (keys are appended).
    A copy is a redirect target only after an anonymous GET of its CDN URL read its bytes."""
    mirror_check_seconds: int = DEFAULT_MIRROR_CHECK_SECONDS
    """Period of the cheap check (HEAD) of every redirect target by the worker."""
    mirror_content_check_seconds: int = DEFAULT_MIRROR_CONTENT_CHECK_SECONDS
    """Period of the content check: a sample of every redirect target's bytes read and
    compared with PostgreSQL's, in the bucket and (behind a CDN) at its CDN address."""
    mirror_content_sample_bytes: int = DEFAULT_MIRROR_CONTENT_SAMPLE_BYTES
    """Bytes of each file the content check reads per pass, a window that moves on at every
    pass until it has covered the file; 0: every file whole (its SHA-256) at every pass."""
    download_cache_dir: Path | None = None
    """A local directory where the API keeps verified copies of archives to serve with
    sendfile (archives are immutable and content-addressed); off when unset."""
    download_cache_bytes: int = DEFAULT_DOWNLOAD_CACHE_BYTES
    """The cache's bound: least recently served files go first."""
    tools_dir: Path | None = None
    """Where the API finds the downloaders' wheel it serves under ``/database/tools/``; unset:
    ``<prefix>/share/gomoku-archive/tools`` (the image), else a checkout's ``dist/``, where
    ``serve`` builds it when it is missing."""
    public_base_url: str | None = None
    """The public origin (``https://gomokuparty.com``) of the absolute addresses written for
    people and tools outside the API (lists, feed, torrents, page examples), without a trailing
    slash; unset: each request's own origin."""
    trusted_proxies: tuple[IPNetwork, ...] = ()
    """Peers whose ``X-Forwarded-Proto``/``X-Forwarded-Host`` are believed when the origin is
    derived from the request."""
    port: int = DEFAULT_PORT
    """The API's TCP port (``serve --port`` overrides it; the image's health check reads it)."""
    metrics_port: int | None = None
    """A port of its own for ``/metrics`` (then not served on ``port``); unset: ``port``."""
    shutdown_drain_seconds: float = DEFAULT_SHUTDOWN_DRAIN_SECONDS
    """After SIGTERM the API fails ``/readyz`` but keeps accepting this long, so load
    balancers take it out of rotation before it stops accepting."""
    shutdown_grace_seconds: float = DEFAULT_SHUTDOWN_GRACE_SECONDS
    """After the drain, how long responses in flight may go on; then they are cut."""
    log_format: LogFormat = "json"
    log_level: str = "INFO"

    def __post_init__(self) -> None:
        problems = self.problems()
        if problems:
            raise InvalidSettings(problems)

    def problems(self) -> list[str]:
        """What is wrong with these values, one sentence each naming the variable; each value
        is checked here and only here (``from_env`` only turns text into values)."""
        found: list[str] = []

        def check(ok: bool, message: str) -> None:
            if not ok:
                found.append(message)

        check(
            _IDENTIFIER.fullmatch(self.games_table) is not None,
            f"GAMES_TABLE must be a table name like games or src.games, got {self.games_table!r}",
        )
        check(
            urlsplit(self.database_url).scheme in ("postgres", "postgresql"),
            "DATABASE_URL must be a postgresql:// URL",
        )
        check(
            self.source_database_url is None
            or urlsplit(self.source_database_url).scheme in ("postgres", "postgresql"),
            "SOURCE_DATABASE_URL must be a postgresql:// URL",
        )
        check(
            urlsplit(self.redis_url).scheme in ("redis", "rediss", "unix"),
            "REDIS_URL must be a redis:// URL",
        )
        check(
            self.log_format in ("json", "console"),
            f"LOG_FORMAT must be json or console, got {self.log_format!r}",
        )
        check(
            self.ops_token is None or len(self.ops_token) >= MIN_OPS_TOKEN_LENGTH,
            f"OPS_TOKEN must be at least {MIN_OPS_TOKEN_LENGTH} characters (it guards forced "
            "rebuilds); generate one with: python3 -c 'import secrets; "
            "print(secrets.token_urlsafe(32))'",
        )
        check(
            self.log_level in LOG_LEVELS,
            f"LOG_LEVEL must be one of {', '.join(LOG_LEVELS)}, got {self.log_level!r}",
        )
        check(
            self.export_first_month >= FIRST_PUBLISHED_MONTH,
            f"EXPORT_FIRST_MONTH must be {FIRST_PUBLISHED_MONTH} or later (the profile publishes "
            f"no earlier month), got {self.export_first_month}",
        )
        check(
            1 <= self.export_processes <= MAX_EXPORT_PROCESSES,
            f"EXPORT_PROCESSES must be a whole number from 1 to {MAX_EXPORT_PROCESSES}, "
            f"got {self.export_processes!r}",
        )
        check(
            self.s3_bucket is None or _BUCKET.fullmatch(self.s3_bucket) is not None,
            f"S3_BUCKET must be a bucket name, got {self.s3_bucket!r}",
        )
        check(
            not self.s3_prefix
            or (not self.s3_prefix.startswith("/") and self.s3_prefix.endswith("/")),
            "S3_PREFIX must not start with / and must end with /",
        )
        check(
            S3_MIN_PART_SIZE <= self.s3_part_size <= S3_MAX_PART_SIZE,
            "S3_PART_SIZE must be between 5 MiB and 5 GiB (S3's limits), "
            f"got {self.s3_part_size} bytes",
        )
        check(
            self.download_cache_bytes >= 1,
            "DOWNLOAD_CACHE_BYTES must be a positive size like 4GiB",
        )
        for name, path in (
            ("DOWNLOAD_CACHE_DIR", self.download_cache_dir),
            ("TOOLS_DIR", self.tools_dir),
        ):
            check(
                path is None or path.is_absolute(),
                f"{name} must be an absolute path, got {str(path)!r}",
            )
        check(
            S3_MIN_PRESIGN_SECONDS <= self.s3_presign_seconds <= S3_MAX_PRESIGN_SECONDS,
            f"S3_PRESIGN_SECONDS must be from {S3_MIN_PRESIGN_SECONDS} to "
            f"{S3_MAX_PRESIGN_SECONDS} (SigV4's 7 days), got {self.s3_presign_seconds}",
        )
        check(
            _is_period(self.mirror_check_seconds, MAX_MIRROR_CHECK_SECONDS),
            f"MIRROR_CHECK_SECONDS must be from {MIN_MIRROR_CHECK_SECONDS} to "
            f"{MAX_MIRROR_CHECK_SECONDS}, whole minutes from 60 on, "
            f"got {self.mirror_check_seconds}",
        )
        check(
            _is_period(self.mirror_content_check_seconds, MAX_MIRROR_CONTENT_CHECK_SECONDS),
            f"MIRROR_CONTENT_CHECK_SECONDS must be from {MIN_MIRROR_CHECK_SECONDS} to "
            f"{MAX_MIRROR_CONTENT_CHECK_SECONDS}, whole minutes from 60 on and whole hours "
            f"from 3600 on, got {self.mirror_content_check_seconds}",
        )
        check(
            self.mirror_content_sample_bytes >= 0,
            "MIRROR_CONTENT_SAMPLE_BYTES must be a size like 1MiB, or 0 for whole files",
        )
        for name, port in (("PORT", self.port), ("METRICS_PORT", self.metrics_port)):
            check(
                port is None or 1 <= port <= 65535,
                f"{name} must be a TCP port from 1 to 65535, got {port}",
            )
        check(
            self.metrics_port is None or self.metrics_port != self.port,
            "METRICS_PORT must differ from PORT (unset it to serve /metrics on PORT)",
        )
        check(
            0 <= self.shutdown_drain_seconds <= MAX_SHUTDOWN_DRAIN_SECONDS,
            f"SHUTDOWN_DRAIN_SECONDS must be from 0 to {MAX_SHUTDOWN_DRAIN_SECONDS:.0f}, "
            f"got {self.shutdown_drain_seconds}",
        )
        check(
            0 <= self.shutdown_grace_seconds <= MAX_SHUTDOWN_GRACE_SECONDS,
            f"SHUTDOWN_GRACE_SECONDS must be from 0 to {MAX_SHUTDOWN_GRACE_SECONDS:.0f}, "
            f"got {self.shutdown_grace_seconds}",
        )
        for name, url in (
            ("S3_ENDPOINT_URL", self.s3_endpoint_url),
            ("S3_PUBLIC_ENDPOINT_URL", self.s3_public_endpoint_url),
            ("CDN_BASE_URL", self.cdn_base_url),
        ):
            check(
                url is None
                or (urlsplit(url).scheme in ("http", "https") and bool(urlsplit(url).netloc)),
                f"{name} must be an http:// or https:// URL, got {url!r}",
            )
        check(
            self.public_base_url is None or _is_origin(self.public_base_url),
            "PUBLIC_BASE_URL must be an origin like https://gomokuparty.com (no path), "
            f"got {self.public_base_url!r}",
        )
        return found

    @property
    def mirror_enabled(self) -> bool:
        return self.s3_bucket is not None

    @property
    def redirect_downloads(self) -> bool:
        return self.s3_bucket is not None and self.s3_redirect

    @property
    def source_url(self) -> str:
        """The database the export reads the games from."""
        return self.source_database_url or self.database_url

    def __repr__(self) -> str:
        shown = []
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "ops_token":
                value = "***" if value else None
            elif f.name in ("database_url", "redis_url", "source_database_url") and value:
                value = mask_url(value)
            shown.append(f"{f.name}={value!r}")
        return f"Settings({', '.join(shown)})"

    @classmethod
    def from_env(
        cls, environ: Mapping[str, str] | None = None, *, isatty: bool | None = None
    ) -> Settings:
        """Build settings from environment variables (``os.environ`` by default). Every
        invalid variable is named in the one ``ConfigError`` raised."""
        env = os.environ if environ is None else environ
        tty = sys.stdout.isatty() if isatty is None else isatty
        problems: list[str] = []
        values: dict[str, object] = {}

        def get(name: str) -> str | None:
            value = env.get(name, "").strip()
            return value or None

        def parse(name: str, attribute: str, parser: Callable[[str], object]) -> None:
            text = get(name)
            if text is None:
                return  # the field's default
            try:
                values[attribute] = parser(text)
            except (ValueError, InvalidMonth) as exc:
                problems.append(f"{name}: {exc}" if not str(exc).startswith(name) else str(exc))

        for name, attribute in (
            ("DATABASE_URL", "database_url"),
            ("SOURCE_DATABASE_URL", "source_database_url"),
            ("REDIS_URL", "redis_url"),
            ("GAMES_TABLE", "games_table"),
            ("OPS_TOKEN", "ops_token"),
            ("S3_BUCKET", "s3_bucket"),
            ("S3_ENDPOINT_URL", "s3_endpoint_url"),
            ("S3_PUBLIC_ENDPOINT_URL", "s3_public_endpoint_url"),
            ("CDN_BASE_URL", "cdn_base_url"),
        ):
            parse(name, attribute, str)
        for name, attribute in (
            ("S3_PRESIGN_SECONDS", "s3_presign_seconds"),
            ("MIRROR_CHECK_SECONDS", "mirror_check_seconds"),
            ("MIRROR_CONTENT_CHECK_SECONDS", "mirror_content_check_seconds"),
            ("PORT", "port"),
            ("METRICS_PORT", "metrics_port"),
        ):
            parse(name, attribute, _integer(name))
        for name, attribute in (
            ("SHUTDOWN_DRAIN_SECONDS", "shutdown_drain_seconds"),
            ("SHUTDOWN_GRACE_SECONDS", "shutdown_grace_seconds"),
        ):
            parse(name, attribute, _seconds(name))
        parse("EXPORT_FIRST_MONTH", "export_first_month", Month.parse)
        parse("EXPORT_PROCESSES", "export_processes", _whole_number("EXPORT_PROCESSES"))
        parse("S3_PREFIX", "s3_prefix", _prefix)
        parse("S3_REDIRECT", "s3_redirect", parse_bool)
        parse("S3_PART_SIZE", "s3_part_size", parse_size)
        parse("MIRROR_CONTENT_SAMPLE_BYTES", "mirror_content_sample_bytes", parse_size)
        parse("DOWNLOAD_CACHE_DIR", "download_cache_dir", Path)
        parse("DOWNLOAD_CACHE_BYTES", "download_cache_bytes", parse_size)
        parse("TOOLS_DIR", "tools_dir", Path)
        parse("PUBLIC_BASE_URL", "public_base_url", lambda text: text.rstrip("/"))
        parse("TRUSTED_PROXIES", "trusted_proxies", parse_networks)
        parse("LOG_LEVEL", "log_level", str.upper)
        values["log_format"] = get("LOG_FORMAT") or ("console" if tty else "json")
        try:
            settings = cls(**values)  # type: ignore[arg-type]  # each parser gives its field's type
        except InvalidSettings as exc:
            problems.extend(exc.problems)
        else:
            if not problems:
                return settings
        raise InvalidSettings(problems)


class InvalidSettings(ConfigError):
    """One or more settings are invalid: all of them named in one line."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = list(problems)
        if len(problems) == 1:
            super().__init__(problems[0])
        else:
            super().__init__(f"{len(problems)} settings are invalid: " + "; ".join(problems))


def _whole_number(name: str) -> Callable[[str], int]:
    def parse(text: str) -> int:
        if not (text.isascii() and text.isdigit()):
            raise ValueError(
                f"{name} must be a whole number from 1 to {MAX_EXPORT_PROCESSES}, got {text!r}"
            )
        return int(text)

    return parse


def _integer(name: str) -> Callable[[str], int]:
    def parse(text: str) -> int:
        if not (text.isascii() and text.isdigit()):
            raise ValueError(f"{name} must be a whole number, got {text!r}")
        return int(text)

    return parse


def _seconds(name: str) -> Callable[[str], float]:
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = float("nan")
        if value != value or value in (float("inf"), float("-inf")):
            raise ValueError(f"{name} must be a number of seconds, got {text!r}")
        return value

    return parse


def _is_period(seconds: int, most: int) -> bool:
    """A period arq's cron can keep (``jobs.schedules.check_schedule``): 5 to 59 seconds, whole
    minutes below an hour, whole hours from an hour on; at most ``most``."""
    if not MIN_MIRROR_CHECK_SECONDS <= seconds <= most:
        return False
    if seconds >= 3600:
        return seconds % 3600 == 0
    return seconds < 60 or seconds % 60 == 0


def _prefix(text: str) -> str:
    """``/db/v1`` → ``db/v1/``: the key prefix with one trailing slash, none leading."""
    stripped = text.strip("/")
    return stripped + "/" if stripped else ""


def _is_origin(url: str) -> bool:
    parts = urlsplit(url)
    return (
        parts.scheme in ("http", "https")
        and bool(parts.netloc)
        and parts.path in ("", "/")
        and not parts.query
        and not parts.fragment
        and "@" not in parts.netloc
    )
