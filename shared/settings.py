"""The one settings object, read from the environment once at start-up and passed down.
Nothing else in the project reads ``os.environ``."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Literal
from urllib.parse import urlsplit, urlunsplit

from shared.errors import ConfigError, InvalidMonth
from shared.months import Month

DEFAULT_DATABASE_URL = "postgresql://postgres@127.0.0.1:5432/gomoku_archive"
DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}(\.[A-Za-z_][A-Za-z0-9_]{0,62})?")

LogFormat = Literal["json", "console"]


def _mask_url(url: str) -> str:
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
    export_first_month: Month = field(default_factory=lambda: Month(2026, 8))
    ops_token: str | None = field(default=None, repr=False)
    """Operator token for /ops/ and its actions; when unset, /ops/ answers 404."""
    s3_bucket: str | None = None
    s3_prefix: str = ""
    s3_endpoint_url: str | None = None
    cdn_base_url: str | None = None
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

    def __repr__(self) -> str:
        shown = []
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "ops_token":
                value = "***" if value else None
            elif f.name in ("database_url", "redis_url"):
                value = _mask_url(value)
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
            first = Month.parse(get("EXPORT_FIRST_MONTH") or "2026-08")
        except InvalidMonth as exc:
            raise ConfigError(f"EXPORT_FIRST_MONTH: {exc}") from None
        log_format = get("LOG_FORMAT") or ("console" if tty else "json")
        if log_format not in ("json", "console"):
            raise ConfigError(f"LOG_FORMAT must be json or console, got {log_format!r}")
        return cls(
            database_url=get("DATABASE_URL") or DEFAULT_DATABASE_URL,
            redis_url=get("REDIS_URL") or DEFAULT_REDIS_URL,
            games_table=get("GAMES_TABLE") or "games",
            export_first_month=first,
            ops_token=get("OPS_TOKEN"),
            s3_bucket=get("S3_BUCKET"),
            s3_prefix=get("S3_PREFIX") or "",
            s3_endpoint_url=get("S3_ENDPOINT_URL"),
            cdn_base_url=get("CDN_BASE_URL"),
            log_format=log_format,  # type: ignore[arg-type]  # checked just above
            log_level=(get("LOG_LEVEL") or "INFO").upper(),
        )
