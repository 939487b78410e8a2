"""The downloader's check of an archive (``gomoku-archive verify``) and its reading of games."""
