"""The ``gomoku-archive`` command line: the one composition root that wires settings, the
services and the workers together. Each subcommand lives in its own module."""
