"""Suite-wide settings: under CI, hypothesis explores the same examples every run, so a red
build always means the code changed, never that a new random example turned up."""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")
