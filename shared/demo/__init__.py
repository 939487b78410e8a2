"""What ``gomoku-archive demo`` starts and stops: a PostgreSQL and a Redis server of its own
(``postgres_server``, ``redis_server``) and the service's processes (``processes``). The
README's demo section says what the demo does and why these servers."""

from shared.errors import ArchiveError


class DemoFailed(ArchiveError):
    """The demo could not start or keep running one of its servers or processes."""

    exit_code = 1
