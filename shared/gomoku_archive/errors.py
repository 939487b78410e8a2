"""The project's error types. Each carries a message meant for a person; the CLI prints it as one
line and the HTTP middleware turns it into a JSON body, so no caller needs to format tracebacks."""

from __future__ import annotations


class ArchiveError(Exception):
    """Base class of every error this project raises on purpose."""

    exit_code = 1


class ConfigError(ArchiveError):
    """A setting in the environment is missing or malformed."""

    exit_code = 2


class DatabaseUnavailable(ArchiveError):
    """PostgreSQL cannot be reached or refused the connection."""

    exit_code = 3


class DatabaseConnectionLost(DatabaseUnavailable):
    """The database ended a session an operation was using (terminated, restarted, network)."""


class RedisUnavailable(ArchiveError):
    """Redis cannot be reached."""

    exit_code = 3


class StoreUnavailable(ArchiveError):
    """The S3 store cannot be reached (the network, the endpoint): a later start may work."""

    exit_code = 3


class InvalidMonth(ArchiveError):
    """A month string is not YYYY-MM, or the month is not one this service publishes."""

    exit_code = 2


class InvalidRebuildReason(ArchiveError):
    """A rebuild's reason is too long, or holds characters a page could not show as text."""

    exit_code = 2


class ExportFailed(ArchiveError):
    """An export could not produce or publish its archive."""


class ExportTimeout(ExportFailed):
    """An export ran over the time limit its caller gave it; nothing was published."""


class RangeRetriesExhausted(ExportFailed):
    """A range of a month failed on every try for reasons that may pass (lost connections, a
    database restarting): the month's build is worth another try later. Exit 3, like the
    database being unavailable."""

    exit_code = 3


class SourceKeptChanging(ExportFailed):
    """The games of a month kept changing while its ranges were read: after every try some
    range's rows differed from one snapshot of the whole month, so no file could hold one
    state of the table. Nothing was published; worth another try later (exit 3)."""

    exit_code = 3


class ExportLocked(ArchiveError):
    """Another process holds the month's export lock."""


class IntegrityError(ArchiveError):
    """Stored archive bytes do not match their recorded size or SHA-256."""


class UnreadableFile(ArchiveError):
    """A file named on the command line cannot be read."""

    exit_code = 2


class MirrorFailed(ArchiveError):
    """The S3 mirror could not copy or check an archive. ``transient``: the store was away or
    busy and a later try may well succeed; otherwise it refused (credentials, bucket, access)."""

    def __init__(self, message: str, *, transient: bool) -> None:
        super().__init__(message)
        self.transient = transient


class ServiceUnreachable(ArchiveError):
    """The archive service (``sync --base-url``) cannot be reached or does not answer."""

    exit_code = 3


class DownloadFailed(ArchiveError):
    """A file could not be downloaded whole, or its bytes are not the ones the manifest lists
    (kept aside, never under its name)."""
