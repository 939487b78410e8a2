import pytest

from shared.errors import ConfigError
from shared.months import Month
from shared.settings import Settings


def test_defaults() -> None:
    s = Settings.from_env({}, isatty=False)
    assert s.games_table == "games"
    assert s.export_first_month == Month(2026, 8)
    assert s.log_format == "json"
    assert s.ops_token is None


def test_console_on_a_terminal() -> None:
    assert Settings.from_env({}, isatty=True).log_format == "console"
    assert Settings.from_env({"LOG_FORMAT": "json"}, isatty=True).log_format == "json"


def test_reads_everything() -> None:
    s = Settings.from_env(
        {
            "DATABASE_URL": "postgresql://u:secret@db:5432/x",
            "REDIS_URL": "redis://r:6379/2",
            "GAMES_TABLE": "src.games",
            "EXPORT_FIRST_MONTH": "2026-09",
            "OPS_TOKEN": "tok",
            "S3_BUCKET": "gomoku-archives",
            "CDN_BASE_URL": "https://cdn.example",
            "LOG_LEVEL": "debug",
        },
        isatty=False,
    )
    assert s.games_table == "src.games"
    assert s.export_first_month == Month(2026, 9)
    assert s.log_level == "DEBUG"
    assert s.ops_token == "tok"


def test_repr_masks_secrets() -> None:
    s = Settings.from_env(
        {"DATABASE_URL": "postgresql://u:secret@db/x", "OPS_TOKEN": "hunter2"}, isatty=False
    )
    text = repr(s)
    assert "secret" not in text
    assert "hunter2" not in text
    assert "***" in text


@pytest.mark.parametrize(
    "env",
    [
        {"GAMES_TABLE": "games; DROP TABLE x"},
        {"GAMES_TABLE": 'ga"mes'},
        {"EXPORT_FIRST_MONTH": "August"},
        {"DATABASE_URL": "mysql://x"},
        {"REDIS_URL": "http://x"},
        {"LOG_FORMAT": "xml"},
        {"S3_BUCKET": "no/slashes"},
        {"S3_PART_SIZE": "4MiB"},
        {"S3_PART_SIZE": "6GiB"},
        {"S3_PART_SIZE": "lots"},
        {"S3_PART_SIZE": "\u0661\u0666MiB"},
        {"S3_REDIRECT": "maybe"},
        {"S3_ENDPOINT_URL": "127.0.0.1:9000"},
        {"CDN_BASE_URL": "ftp://cdn.example"},
    ],
)
def test_rejects(env: dict[str, str]) -> None:
    with pytest.raises(ConfigError):
        Settings.from_env(env, isatty=False)


def test_s3_defaults_leave_mirroring_off() -> None:
    s = Settings.from_env({}, isatty=False)
    assert s.s3_bucket is None
    assert not s.mirror_enabled
    assert not s.redirect_downloads
    assert s.s3_part_size == 16 * 1024 * 1024


@pytest.mark.parametrize(
    ("env", "part_size", "prefix", "redirect"),
    [
        ({"S3_BUCKET": "gp"}, 16 * 2**20, "", True),
        ({"S3_BUCKET": "gp", "S3_PART_SIZE": "5242880"}, 5 * 2**20, "", True),
        ({"S3_BUCKET": "gp", "S3_PART_SIZE": "8 MiB"}, 8 * 2**20, "", True),
        ({"S3_BUCKET": "gp", "S3_PART_SIZE": "1GiB"}, 2**30, "", True),
        ({"S3_BUCKET": "gp", "S3_PREFIX": "archives"}, 16 * 2**20, "archives/", True),
        ({"S3_BUCKET": "gp", "S3_PREFIX": "/db/v1/"}, 16 * 2**20, "db/v1/", True),
        ({"S3_BUCKET": "gp", "S3_REDIRECT": "off"}, 16 * 2**20, "", False),
        ({"S3_BUCKET": "gp", "S3_REDIRECT": "No"}, 16 * 2**20, "", False),
        ({"S3_BUCKET": "gp", "S3_REDIRECT": "1"}, 16 * 2**20, "", True),
    ],
)
def test_s3_settings(env: dict[str, str], part_size: int, prefix: str, redirect: bool) -> None:
    s = Settings.from_env(env, isatty=False)
    assert s.mirror_enabled
    assert s.s3_part_size == part_size
    assert s.s3_prefix == prefix
    assert s.redirect_downloads is redirect


def test_s3_settings_errors_name_the_variable() -> None:
    with pytest.raises(ConfigError, match="S3_PART_SIZE must be between 5 MiB and 5 GiB"):
        Settings.from_env({"S3_PART_SIZE": "1048576"}, isatty=False)
    with pytest.raises(ConfigError, match="S3_REDIRECT"):
        Settings.from_env({"S3_REDIRECT": "sometimes"}, isatty=False)
