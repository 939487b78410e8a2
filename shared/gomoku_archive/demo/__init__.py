"""The demo: realistic game rows (``games``, ``player``, ``defects``), the bundled example
archive (``examples``), and what ``gomoku-archive demo`` starts and stops: a PostgreSQL and a
Redis server of its own and the service's processes. docs/demo.md has more."""

from gomoku_archive.errors import ArchiveError


class DemoFailed(ArchiveError):
    """The demo could not start or keep running one of its servers or processes."""

    exit_code = 1
