"""Gomoku Party's monthly SGF game archives: the ``gomoku-party-sgf-1`` profile, its export,
its HTTP service and the downloaders' tools. docs/architecture.md maps the sub-packages."""
