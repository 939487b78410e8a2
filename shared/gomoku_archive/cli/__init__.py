"""The ``gomoku-archive`` command line: every command, each in its own module, found through the
``gomoku_archive.commands`` entry points (``main.command_modules``)."""
