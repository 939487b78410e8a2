"""``python -m gomoku_archive``: the ``gomoku-archive`` command."""

import sys

from gomoku_archive.cli.main import main

sys.exit(main())
