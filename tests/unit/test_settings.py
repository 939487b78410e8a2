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
            "S3_BUCKET": "b",
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
    ],
)
def test_rejects(env: dict[str, str]) -> None:
    with pytest.raises(ConfigError):
        Settings.from_env(env, isatty=False)
