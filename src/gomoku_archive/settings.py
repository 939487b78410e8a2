"""The one settings object, read from the environment once at start-up and passed down.
Nothing else in the project reads ``os.environ``."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit, urlunsplit

from gomoku_archive.errors import ConfigError, InvalidMonth
from gomoku_archive.http.origin import IPNetwork, parse_networks
from gomoku_archive.profile.months import Month
from gomoku_archive.profile.writer import FIRST_PUBLISHED_MONTH

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
    redis_url: str = DEFAULT_REDIS_URL
    games_table: str = "games"
    """The game server's table, optionally schema-qualified; validated as an identifier."""
    export_first_month: Month = FIRST_PUBLISHED_MONTH
    export_processes: int = 2
    """Processes an export of a big month uses to classify and format games, its own
    included; 1 keeps every export in one process."""
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
    cdn_base_url: str | None = None
    """Public base URL of the bucket's root behind a CDN, for redirects (keys are appended)."""
    download_cache_dir: Path | None = None
    """A local directory where the API keeps verified copies of archives to serve with
    sendfile (archives are immutable and content-addressed); off when unset."""
    download_cache_bytes: int = DEFAULT_DOWNLOAD_CACHE_BYTES
    """The cache's bound: least recently served files go first."""
    public_base_url: str | None = None
    """The public origin (``https://gomokuparty.com``) of the absolute addresses written for
    people and tools outside the API (lists, feed, torrents, page examples), without a trailing
    slash; unset: each request's own origin."""
    trusted_proxies: tuple[IPNetwork, ...] = ()
    """Peers whose ``X-Forwarded-Proto``/``X-Forwarded-Host`` are believed when the origin is
    derived from the request."""
    log_format: LogFormat = "json"
    log_level: str = "INFO"

    def __post_init__(self) -> None:
        if not _IDENTIFIER.fullmatch(self.games_table):
            raise ConfigError(
                "GAMES_TABLE must be a table name like games or src.games, "
                f"got {self.games_table!r}"
            )
        if urlsplit(self.database_url).scheme not in ("postgres", "postgresql"):
            raise ConfigError("DATABASE_URL must be a postgresql:// URL")
        if urlsplit(self.redis_url).scheme not in ("redis", "rediss", "unix"):
            raise ConfigError("REDIS_URL must be a redis:// URL")
        if self.log_format not in ("json", "console"):
            raise ConfigError(f"LOG_FORMAT must be json or console, got {self.log_format!r}")
        if self.ops_token is not None and len(self.ops_token) < MIN_OPS_TOKEN_LENGTH:
            raise ConfigError(
                f"OPS_TOKEN must be at least {MIN_OPS_TOKEN_LENGTH} characters (it guards "
                "forced rebuilds); generate one with: python3 -c 'import secrets; "
                "print(secrets.token_urlsafe(32))'"
            )
        if self.log_level not in LOG_LEVELS:
            raise ConfigError(
                f"LOG_LEVEL must be one of {', '.join(LOG_LEVELS)}, got {self.log_level!r}"
            )
        if self.export_first_month < FIRST_PUBLISHED_MONTH:
            raise ConfigError(
                f"EXPORT_FIRST_MONTH must be {FIRST_PUBLISHED_MONTH} or later (the profile "
                f"publishes no earlier month), got {self.export_first_month}"
            )
        if not 1 <= self.export_processes <= MAX_EXPORT_PROCESSES:
            raise ConfigError(
                f"EXPORT_PROCESSES must be a whole number from 1 to {MAX_EXPORT_PROCESSES}, "
                f"got {self.export_processes!r}"
            )
        if self.s3_bucket is not None and not _BUCKET.fullmatch(self.s3_bucket):
            raise ConfigError(f"S3_BUCKET must be a bucket name, got {self.s3_bucket!r}")
        if self.s3_prefix and (self.s3_prefix.startswith("/") or not self.s3_prefix.endswith("/")):
            raise ConfigError("S3_PREFIX must not start with / and must end with /")
        if not S3_MIN_PART_SIZE <= self.s3_part_size <= S3_MAX_PART_SIZE:
            raise ConfigError(
                f"S3_PART_SIZE must be between 5 MiB and 5 GiB (S3's limits), "
                f"got {self.s3_part_size} bytes"
            )
        if self.download_cache_bytes < 1:
            raise ConfigError("DOWNLOAD_CACHE_BYTES must be a positive size like 4GiB")
        if self.download_cache_dir is not None and not self.download_cache_dir.is_absolute():
            raise ConfigError(
                f"DOWNLOAD_CACHE_DIR must be an absolute path, got {str(self.download_cache_dir)!r}"
            )
        for name, url in (
            ("S3_ENDPOINT_URL", self.s3_endpoint_url),
            ("CDN_BASE_URL", self.cdn_base_url),
        ):
            if url is not None and (
                urlsplit(url).scheme not in ("http", "https") or not urlsplit(url).netloc
            ):
                raise ConfigError(f"{name} must be an http:// or https:// URL, got {url!r}")
        if self.public_base_url is not None:
            parts = urlsplit(self.public_base_url)
            if (
                parts.scheme not in ("http", "https")
                or not parts.netloc
                or parts.path not in ("", "/")
                or parts.query
                or parts.fragment
                or "@" in parts.netloc
            ):
                raise ConfigError(
                    "PUBLIC_BASE_URL must be an origin like https://gomokuparty.com (no path), "
                    f"got {self.public_base_url!r}"
                )

    @property
    def mirror_enabled(self) -> bool:
        return self.s3_bucket is not None

    @property
    def redirect_downloads(self) -> bool:
        return self.s3_bucket is not None and self.s3_redirect

    def __repr__(self) -> str:
        shown = []
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "ops_token":
                value = "***" if value else None
            elif f.name in ("database_url", "redis_url"):
                value = mask_url(value)
            shown.append(f"{f.name}={value!r}")
        return f"Settings({', '.join(shown)})"

    @classmethod
    def from_env(
        cls, environ: Mapping[str, str] | None = None, *, isatty: bool | None = None
    ) -> Settings:
        """Build settings from environment variables (``os.environ`` by default)."""
        env = os.environ if environ is None else environ
        tty = sys.stdout.isatty() if isatty is None else isatty

        def get(name: str) -> str | None:
            value = env.get(name, "").strip()
            return value or None

        try:
            first = Month.parse(get("EXPORT_FIRST_MONTH") or str(FIRST_PUBLISHED_MONTH))
        except InvalidMonth as exc:
            raise ConfigError(f"EXPORT_FIRST_MONTH: {exc}") from None
        log_level = (get("LOG_LEVEL") or "INFO").upper()
        processes_text = get("EXPORT_PROCESSES") or "2"
        if not processes_text.isdigit() or not processes_text.isascii():
            raise ConfigError(
                f"EXPORT_PROCESSES must be a whole number from 1 to {MAX_EXPORT_PROCESSES}, "
                f"got {processes_text!r}"
            )
        try:
            part_size = parse_size(get("S3_PART_SIZE") or str(DEFAULT_S3_PART_SIZE))
        except ValueError as exc:
            raise ConfigError(f"S3_PART_SIZE: {exc}") from None
        try:
            redirect = parse_bool(get("S3_REDIRECT") or "on")
        except ValueError as exc:
            raise ConfigError(f"S3_REDIRECT: {exc}") from None
        try:
            cache_size = get("DOWNLOAD_CACHE_BYTES") or str(DEFAULT_DOWNLOAD_CACHE_BYTES)
            cache_bytes = parse_size(cache_size)
        except ValueError as exc:
            raise ConfigError(f"DOWNLOAD_CACHE_BYTES: {exc}") from None
        cache_dir = get("DOWNLOAD_CACHE_DIR")
        try:
            proxies = parse_networks(get("TRUSTED_PROXIES") or "")
        except ValueError as exc:
            raise ConfigError(f"TRUSTED_PROXIES: {exc}") from None
        base_url = get("PUBLIC_BASE_URL")
        prefix = (get("S3_PREFIX") or "").strip("/")
        log_format = get("LOG_FORMAT") or ("console" if tty else "json")
        if log_format not in ("json", "console"):
            raise ConfigError(f"LOG_FORMAT must be json or console, got {log_format!r}")
        return cls(
            database_url=get("DATABASE_URL") or DEFAULT_DATABASE_URL,
            redis_url=get("REDIS_URL") or DEFAULT_REDIS_URL,
            games_table=get("GAMES_TABLE") or "games",
            export_first_month=first,
            export_processes=int(processes_text),
            ops_token=get("OPS_TOKEN"),
            s3_bucket=get("S3_BUCKET"),
            s3_prefix=prefix + "/" if prefix else "",
            s3_endpoint_url=get("S3_ENDPOINT_URL"),
            s3_redirect=redirect,
            s3_part_size=part_size,
            cdn_base_url=get("CDN_BASE_URL"),
            download_cache_dir=Path(cache_dir) if cache_dir else None,
            download_cache_bytes=cache_bytes,
            public_base_url=base_url.rstrip("/") if base_url else None,
            trusted_proxies=proxies,
            log_format=log_format,  # type: ignore[arg-type]  # checked just above
            log_level=log_level,
        )
