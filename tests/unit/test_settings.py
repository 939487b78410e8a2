import pytest

from gomoku_archive.errors import ConfigError
from gomoku_archive.profile.months import Month
from gomoku_archive.settings import Settings


def test_defaults() -> None:
    s = Settings.from_env({}, isatty=False)
    assert s.games_table == "games"
    assert s.export_first_month == Month(2026, 8)
    assert s.log_format == "json"
    assert s.ops_token is None
    assert s.export_processes == 2


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
            "OPS_TOKEN": "tok-0123456789abcdefghijklmnopqrstuvwxyz",
            "S3_BUCKET": "gomoku-archives",
            "CDN_BASE_URL": "https://cdn.example",
            "LOG_LEVEL": "debug",
        },
        isatty=False,
    )
    assert s.games_table == "src.games"
    assert s.export_first_month == Month(2026, 9)
    assert s.log_level == "DEBUG"
    assert Settings.from_env({"EXPORT_PROCESSES": " 1 "}, isatty=False).export_processes == 1
    assert s.ops_token == "tok-0123456789abcdefghijklmnopqrstuvwxyz"
    assert s.source_url == s.database_url  # no replica: the games are read where the archive is


def test_a_read_replica_for_the_games() -> None:
    s = Settings.from_env(
        {
            "DATABASE_URL": "postgresql://u:secret@primary/x",
            "SOURCE_DATABASE_URL": "postgresql://reader:hidden@replica/games",
        },
        isatty=False,
    )
    assert s.source_url == "postgresql://reader:hidden@replica/games"
    assert "hidden" not in repr(s) and "replica" in repr(s)


def test_repr_masks_secrets() -> None:
    s = Settings.from_env(
        {
            "DATABASE_URL": "postgresql://u:secret@db/x",
            "OPS_TOKEN": "hunter2-hunter2-hunter2-hunter2-hunter2",
        },
        isatty=False,
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
        {"SOURCE_DATABASE_URL": "mysql://x"},
        {"REDIS_URL": "http://x"},
        {"LOG_FORMAT": "xml"},
        {"S3_BUCKET": "no/slashes"},
        {"LOG_LEVEL": "LOUD"},
        {"OPS_TOKEN": "a"},
        {"OPS_TOKEN": "x" * 31},
        {"EXPORT_FIRST_MONTH": "2026-07"},
        {"S3_PART_SIZE": "4MiB"},
        {"S3_PART_SIZE": "6GiB"},
        {"S3_PART_SIZE": "lots"},
        {"S3_PART_SIZE": "\u0661\u0666MiB"},
        {"S3_REDIRECT": "maybe"},
        {"S3_ENDPOINT_URL": "127.0.0.1:9000"},
        {"CDN_BASE_URL": "ftp://cdn.example"},
        {"EXPORT_PROCESSES": "0"},
        {"EXPORT_PROCESSES": "65"},
        {"EXPORT_PROCESSES": "two"},
        {"EXPORT_PROCESSES": "-1"},
        {"EXPORT_PROCESSES": "1.5"},
        {"EXPORT_PROCESSES": "\u0662"},
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


def test_the_download_cache_is_off_by_default() -> None:
    s = Settings.from_env({}, isatty=False)
    assert s.download_cache_dir is None
    assert s.download_cache_bytes == 4 * 1024**3


def test_the_download_cache_reads_a_directory_and_a_size() -> None:
    s = Settings.from_env(
        {"DOWNLOAD_CACHE_DIR": "/var/cache/gomoku", "DOWNLOAD_CACHE_BYTES": "512MiB"},
        isatty=False,
    )
    assert str(s.download_cache_dir) == "/var/cache/gomoku"
    assert s.download_cache_bytes == 512 * 1024**2


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"DOWNLOAD_CACHE_BYTES": "lots"}, "DOWNLOAD_CACHE_BYTES"),
        ({"DOWNLOAD_CACHE_BYTES": "0"}, "DOWNLOAD_CACHE_BYTES"),
        ({"DOWNLOAD_CACHE_DIR": "relative/cache"}, "DOWNLOAD_CACHE_DIR"),
    ],
)
def test_the_download_cache_refuses_bad_values(env: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        Settings.from_env(env, isatty=False)


@pytest.mark.slow  # runs the command line once per setting
def test_setting_errors_are_one_line_and_exit_2() -> None:
    """Every bad setting ends the command with one line naming the variable, never a
    traceback (LOG_LEVEL=LOUD used to reach logging's ValueError)."""
    import os
    import subprocess
    import sys

    for name, value in (
        ("LOG_LEVEL", "LOUD"),
        ("EXPORT_FIRST_MONTH", "2025-12"),
        ("EXPORT_PROCESSES", "many"),
    ):
        done = subprocess.run(
            [sys.executable, "-m", "gomoku_archive.cli.main", "manifest"],
            env={**os.environ, name: value},
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 2, done.stderr
        assert done.stderr.count("\n") == 1, done.stderr
        assert done.stderr.startswith(f"gomoku-archive: error: {name} must be")


def test_a_short_operator_token_is_refused_with_a_clear_message() -> None:
    with pytest.raises(ConfigError, match="OPS_TOKEN must be at least 32 characters"):
        Settings.from_env({"OPS_TOKEN": "a"}, isatty=False)
    assert Settings.from_env({"OPS_TOKEN": "x" * 32}, isatty=False).ops_token == "x" * 32


def test_public_origin_settings() -> None:
    s = Settings.from_env(
        {"PUBLIC_BASE_URL": "https://gomokuparty.com/", "TRUSTED_PROXIES": "10.0.0.0/8, ::1"},
        isatty=False,
    )
    assert s.public_base_url == "https://gomokuparty.com"
    assert [str(n) for n in s.trusted_proxies] == ["10.0.0.0/8", "::1/128"]
    default = Settings.from_env({}, isatty=False)
    assert default.public_base_url is None
    assert default.trusted_proxies == ()


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"PUBLIC_BASE_URL": "gomokuparty.com"}, "PUBLIC_BASE_URL must be an origin"),
        ({"PUBLIC_BASE_URL": "ftp://gomokuparty.com"}, "PUBLIC_BASE_URL must be an origin"),
        ({"PUBLIC_BASE_URL": "https://gomokuparty.com/db"}, "PUBLIC_BASE_URL must be an origin"),
        ({"PUBLIC_BASE_URL": "https://a.com/?x=1"}, "PUBLIC_BASE_URL must be an origin"),
        ({"PUBLIC_BASE_URL": "https://u@a.com"}, "PUBLIC_BASE_URL must be an origin"),
        ({"TRUSTED_PROXIES": "10.0.0.1, proxy.local"}, "TRUSTED_PROXIES: 'proxy.local' is not"),
        ({"TRUSTED_PROXIES": "10.0.0.0/33"}, "TRUSTED_PROXIES: '10.0.0.0/33' is not"),
    ],
)
def test_public_origin_settings_errors(env: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=message) as caught:
        Settings.from_env(env, isatty=False)
    assert "\n" not in str(caught.value)


def test_urls_are_masked_for_messages() -> None:
    from gomoku_archive.settings import mask_url

    assert mask_url("postgresql://u:secret@db:5432/x") == "postgresql://u:***@db:5432/x"
    assert mask_url("redis://127.0.0.1:6379/0") == "redis://127.0.0.1:6379/0"


def test_every_invalid_setting_is_named_in_one_message() -> None:
    env = {
        "LOG_LEVEL": "LOUD",
        "LOG_FORMAT": "xml",
        "EXPORT_PROCESSES": "many",
        "S3_PART_SIZE": "1MiB",
        "TRUSTED_PROXIES": "proxy.local",
    }
    with pytest.raises(ConfigError) as caught:
        Settings.from_env(env, isatty=False)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith("5 settings are invalid: ")
    for name in env:
        assert message.count(name) == 1, (name, message)


def test_one_invalid_setting_is_its_own_sentence() -> None:
    with pytest.raises(ConfigError) as caught:
        Settings.from_env({"LOG_FORMAT": "xml"}, isatty=False)
    assert str(caught.value) == "LOG_FORMAT must be json or console, got 'xml'"
