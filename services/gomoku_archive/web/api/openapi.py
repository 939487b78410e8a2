"""The OpenAPI 3.1 description of every public route, as data. A schemathesis test runs it
against the live application, so it stays true."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from gomoku_archive.catalog.manifest import LICENSE, PROFILE, SCHEMA_VERSION
from gomoku_archive.gomoku.game import BOARD_SIZE
from gomoku_archive.profile.stats import LENGTH_BIN, NO_TIME_CONTROL
from gomoku_archive.profile.vocabulary import ALL_REASONS, ALL_TERMINATIONS

DOCUMENT_REVISED = datetime(2026, 12, 7, tzinfo=UTC)
"""The document's Last-Modified (it is built from constants): change it with the document
(tests/unit/web/test_openapi_document.py holds the two together by the document's hash)."""
OPENAPI_CACHING = "public, max-age=3600"
_ERROR = {"$ref": "#/components/schemas/Error"}
_MANIFEST_REF = {"$ref": "#/components/schemas/Manifest"}
_JSON_ERROR = {"application/json": {"schema": _ERROR}}
_REBUILD_REASON = {
    "type": ["string", "null"],
    "minLength": 1,
    "maxLength": 200,
    "description": "Why the rebuild that built this file (or listing) was asked, as the "
    "operators wrote it: one line of plain text; null when it was not a rebuild or no reason "
    "was given. It never changes once published",
}


def _counts(keys: tuple[str, ...]) -> dict[str, Any]:
    return {
        "type": "object",
        "required": list(keys),
        "properties": {k: {"type": "integer", "minimum": 0} for k in keys},
        "additionalProperties": {"type": "integer", "minimum": 0},
    }


_MONTH = {
    "type": "object",
    "required": [
        "month",
        "games",
        "file",
        "downloadUrl",
        "checksumUrl",
        "bytes",
        "uncompressedBytes",
        "sha256",
        "publishedAt",
        "candidateGames",
        "excludedGames",
        "exclusions",
        "results",
        "stats",
    ],
    "properties": {
        "month": {"type": "string", "pattern": "^[0-9]{4}-(0[1-9]|1[0-2])$"},
        "games": {"type": "integer", "minimum": 0},
        "file": {"type": ["string", "null"], "description": "null for a zero-game month"},
        "downloadUrl": {"type": ["string", "null"]},
        "checksumUrl": {"type": ["string", "null"]},
        "torrentUrl": {"type": ["string", "null"], "description": "its v1 torrent (web seeded)"},
        "bytes": {"type": "integer", "minimum": 0},
        "uncompressedBytes": {"type": "integer", "minimum": 0},
        "sha256": {"type": ["string", "null"], "pattern": "^[0-9a-f]{64}$"},
        "publishedAt": {"type": "string", "format": "date-time"},
        "firstPublishedAt": {"type": "string", "format": "date-time"},
        "candidateGames": {"type": "integer", "minimum": 0},
        "excludedGames": {"type": "integer", "minimum": 0},
        "exclusions": _counts(ALL_REASONS),
        "results": _counts(ALL_TERMINATIONS),
        "rebuildReason": _REBUILD_REASON,
        "previousFiles": {
            "type": "array",
            "description": "Earlier files of a rebuilt month, most recently superseded first; "
            "still downloadable at their URLs",
            "items": {"$ref": "#/components/schemas/PreviousFile"},
        },
        "previousZeroGameListings": {
            "type": "array",
            "description": "Earlier listings of the month without games (no file) that a "
            "rebuild with games superseded, most recently superseded first",
            "items": {"$ref": "#/components/schemas/PreviousZeroGameListing"},
        },
        "stats": {
            "oneOf": [{"$ref": "#/components/schemas/MonthStats"}, {"type": "null"}],
            "description": "Statistics of the month's games; null for a month published before "
            "they were counted (its next export adds them)",
        },
        "parquet": {
            "oneOf": [{"$ref": "#/components/schemas/ParquetFile"}, {"type": "null"}],
            "description": "The file's Parquet companion: the same games as typed columns, to "
            "query in place; null for a month without games, and for a while after a month "
            "published before companions existed (a worker job makes its companion)",
        },
    },
}

_PARQUET_FILE = {
    "type": "object",
    "required": [
        "file",
        "downloadUrl",
        "checksumUrl",
        "bytes",
        "sha256",
        "rows",
        "rowGroups",
        "schema",
        "createdBy",
    ],
    "properties": {
        "file": {
            "type": "string",
            "pattern": "^gomoku-party-[0-9]{4}-(0[1-9]|1[0-2])-[0-9a-f]{16}[.]parquet$",
            "description": "gomoku-party-YYYY-MM-<first 16 hex of its own SHA-256>.parquet",
        },
        "downloadUrl": {"type": "string"},
        "checksumUrl": {"type": "string"},
        "bytes": {"type": "integer", "minimum": 1},
        "sha256": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
        "rows": {"type": "integer", "minimum": 1, "description": "One row a game: the games"},
        "rowGroups": {"type": "integer", "minimum": 1},
        "schema": {
            "type": "string",
            "description": "The companion's schema (its columns on /database/profile)",
        },
        "createdBy": {
            "type": "string",
            "description": "The writer, as the file's footer names it: part of the file's "
            "identity (the same games give the same bytes with the same writer)",
        },
    },
}

_COUNT = {"type": "integer", "minimum": 0}
_MAYBE_MOVES = {"type": ["integer", "null"], "minimum": 1, "maximum": BOARD_SIZE * BOARD_SIZE}
_MAYBE_RATING = {"type": ["integer", "null"]}
_GRID = {
    "type": "array",
    "description": f"{BOARD_SIZE} rows from the top, each {BOARD_SIZE} columns from the left",
    "minItems": BOARD_SIZE,
    "maxItems": BOARD_SIZE,
    "items": {"type": "array", "minItems": BOARD_SIZE, "maxItems": BOARD_SIZE, "items": _COUNT},
}
_MONTH_STATS = {
    "type": "object",
    "description": "Counted from the published games; percentiles are nearest-rank, null when "
    "there is no value",
    "required": ["winners", "length", "firstMoves", "allMoves", "ratings", "timeControls"],
    "properties": {
        "winners": {
            "type": "object",
            "required": ["black", "white", "draw"],
            "properties": {"black": _COUNT, "white": _COUNT, "draw": _COUNT},
        },
        "length": {
            "type": "object",
            "description": "Game length in moves",
            "required": ["min", "median", "p90", "max", "histogram"],
            "properties": {
                "min": _MAYBE_MOVES,
                "median": _MAYBE_MOVES,
                "mean": {
                    "type": ["number", "null"],
                    "description": "The mean length, to one decimal",
                    "minimum": 1,
                    "maximum": BOARD_SIZE * BOARD_SIZE,
                },
                "p90": _MAYBE_MOVES,
                "max": _MAYBE_MOVES,
                "histogram": {
                    "type": "array",
                    "description": f"{LENGTH_BIN}-move bins from 1 to 225, ends inclusive",
                    "items": {
                        "type": "object",
                        "required": ["from", "to", "games"],
                        "properties": {"from": _COUNT, "to": _COUNT, "games": _COUNT},
                    },
                },
            },
        },
        "firstMoves": {**_GRID, "description": "Black's first move: games per point"},
        "allMoves": {**_GRID, "description": "Every move of both colours: stones per point"},
        "ratings": {
            "type": "object",
            "description": "BR and WR of every game, each counted once per game",
            "required": ["count", "p10", "median", "p90"],
            "properties": {
                "count": _COUNT,
                "p10": _MAYBE_RATING,
                "median": _MAYBE_RATING,
                "p90": _MAYBE_RATING,
            },
        },
        "timeControls": {
            "type": "object",
            "description": f"Games per XTC value in seconds; {NO_TIME_CONTROL!r}: without one",
            "additionalProperties": _COUNT,
        },
    },
}

_PREVIOUS_FILE = {
    "type": "object",
    "required": [
        "file",
        "sha256",
        "bytes",
        "games",
        "downloadUrl",
        "checksumUrl",
        "publishedAt",
        "supersededAt",
    ],
    "properties": {
        "file": {"type": "string"},
        "sha256": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
        "bytes": {"type": "integer", "minimum": 0},
        "games": {"type": "integer", "minimum": 0},
        "candidateGames": {"type": "integer", "minimum": 0},
        "excludedGames": {"type": "integer", "minimum": 0},
        "downloadUrl": {"type": "string"},
        "checksumUrl": {"type": "string"},
        "torrentUrl": {"type": "string"},
        "publishedAt": {"type": "string", "format": "date-time"},
        "firstPublishedAt": {"type": "string", "format": "date-time"},
        "supersededAt": {"type": "string", "format": "date-time"},
        "rebuildReason": _REBUILD_REASON,
        "parquet": {
            "oneOf": [{"$ref": "#/components/schemas/ParquetFile"}, {"type": "null"}],
            "description": "Its Parquet companion, superseded with it (null: it had none)",
        },
    },
}

_PREVIOUS_ZERO_GAME_LISTING = {
    "type": "object",
    "required": ["candidateGames", "excludedGames", "publishedAt", "supersededAt"],
    "properties": {
        "candidateGames": {"type": "integer", "minimum": 0},
        "excludedGames": {"type": "integer", "minimum": 0},
        "publishedAt": {"type": "string", "format": "date-time"},
        "supersededAt": {"type": "string", "format": "date-time"},
        "rebuildReason": _REBUILD_REASON,
    },
}

_MANIFEST = {
    "type": "object",
    "required": ["schemaVersion", "profile", "license", "scope", "totalGames", "months"],
    "properties": {
        "schemaVersion": {"const": SCHEMA_VERSION},
        "profile": {"const": PROFILE},
        "license": {"const": LICENSE},
        "scope": {"type": "object"},
        "totalGames": {"type": "integer", "minimum": 0},
        "months": {"type": "array", "items": {"$ref": "#/components/schemas/Month"}},
    },
}


def _header(name: str, description: str) -> dict[str, Any]:
    return {
        "name": name,
        "in": "header",
        "required": False,
        "description": description,
        "schema": {"type": "string"},
    }


_CONDITIONAL = [
    _header("If-None-Match", "Entity-tags (or *) the client holds: a match gives 304"),
    _header("If-Modified-Since", "HTTP-date; ignored when If-None-Match is sent"),
    _header("If-Match", "Entity-tags (or *): no strong match gives 412"),
    _header("If-Unmodified-Since", "HTTP-date; ignored when If-Match is sent"),
]
_RANGE = [
    _header("Range", "One byte range (bytes=first-last, first-, -suffix); GET only"),
    _header("If-Range", "An entity-tag or HTTP-date: the Range counts only if it matches"),
]
_FILE_PARAM = {
    "name": "file",
    "in": "path",
    "required": True,
    "description": "gomoku-party-YYYY-MM-<16 hex digits>.sgf.gz, or its Parquet companion's "
    "gomoku-party-YYYY-MM-<16 hex digits>.parquet, as listed in the manifest",
    "schema": {"type": "string"},
}
_NOT_MODIFIED = {"description": "The client's copy is current", "headers": {}}
_CACHE_HEADERS = {
    "ETag": {"schema": {"type": "string"}, "required": True},
    "Cache-Control": {"schema": {"type": "string"}, "required": True},
}


def _get_and_head(operation: dict[str, Any], op_id: str) -> dict[str, Any]:
    head = {**operation, "operationId": f"head{op_id}", "summary": "Headers of " + op_id}
    return {"get": {**operation, "operationId": f"get{op_id}"}, "head": head}


def _manifest_operation() -> dict[str, Any]:
    return {
        "summary": "The archive manifest",
        "parameters": [_header("Accept-Encoding", "gzip is used when accepted"), *_CONDITIONAL],
        "responses": {
            "200": {
                "description": "Every published month, newest first",
                "headers": _CACHE_HEADERS,
                "content": {"application/json": {"schema": _MANIFEST_REF}},
            },
            "304": _NOT_MODIFIED,
            "412": {"description": "If-Match did not match", "content": _JSON_ERROR},
        },
    }


def _file_operation(summary: str, *media: str) -> dict[str, Any]:
    body: dict[str, Any] = {m: {} for m in media}
    return {
        "summary": summary,
        "parameters": [_FILE_PARAM, *_CONDITIONAL, *_RANGE],
        "responses": {
            "200": {"description": "The whole file", "headers": _CACHE_HEADERS, "content": body},
            "206": {"description": "The one requested range", "content": body},
            "304": _NOT_MODIFIED,
            "404": {"description": "No such published file", "content": _JSON_ERROR},
            "412": {"description": "A precondition failed", "content": _JSON_ERROR},
            "416": {"description": "The range is not satisfiable", "content": _JSON_ERROR},
            "503": {"description": "The database is unavailable", "content": _JSON_ERROR},
        },
    }


def _torrent_operation() -> dict[str, Any]:
    body: dict[str, Any] = {"application/x-bittorrent": {}}
    return {
        "summary": "A deterministic v1 torrent of an archive file, web seeded (BEP 19)",
        "parameters": [_FILE_PARAM, *_CONDITIONAL],
        "responses": {
            "200": {"description": "The .torrent file", "headers": _CACHE_HEADERS, "content": body},
            "304": _NOT_MODIFIED,
            "404": {"description": "No such published file", "content": _JSON_ERROR},
            "412": {"description": "A precondition failed", "content": _JSON_ERROR},
            "503": {"description": "The database is unavailable", "content": _JSON_ERROR},
        },
    }


def _simple(
    summary: str, op_id: str, media: str, codes: tuple[str, ...] = ("200",)
) -> dict[str, Any]:
    """A route without conditional requests, GET and HEAD (aiohttp answers HEAD on every GET
    route)."""
    content: dict[str, Any] = {media: {}}
    if media == "application/json":
        content = {media: {"schema": {"type": "object"}}}
    responses = {code: {"description": summary, "content": content} for code in codes}
    return _get_and_head({"summary": summary, "responses": responses}, op_id)


def _redirect(summary: str, op_id: str, status: str, parameters: list[Any]) -> dict[str, Any]:
    headers = {"Location": {"schema": {"type": "string"}, "required": True}}
    operation = {
        "summary": summary,
        "parameters": parameters,
        "responses": {status: {"description": summary, "headers": headers}},
    }
    return _get_and_head(operation, op_id)


def _root() -> dict[str, Any]:
    operation = {
        "summary": "Nothing is served here: a browser is sent to /database/",
        "parameters": [_header("Accept", "text/html weighed above application/json: a browser")],
        "responses": {
            "302": {
                "description": "A browser, sent to the database page (Vary: Accept)",
                "headers": {"Location": {"schema": {"type": "string"}, "required": True}},
            },
            "404": {"description": "Any other client", "content": _JSON_ERROR},
        },
    }
    return _get_and_head(operation, "Root")


def _openapi() -> dict[str, Any]:
    operation = {
        "summary": "This OpenAPI document",
        "parameters": [_header("Accept-Encoding", "gzip is used when accepted"), *_CONDITIONAL],
        "responses": {
            "200": {
                "description": "The document",
                "headers": {
                    **_CACHE_HEADERS,
                    "Last-Modified": {"schema": {"type": "string"}, "required": True},
                },
                "content": {"application/json": {"schema": {"type": "object"}}},
            },
            "304": _NOT_MODIFIED,
            "412": {"description": "If-Match did not match", "content": _JSON_ERROR},
        },
    }
    return _get_and_head(operation, "OpenApi")


def _tool_file() -> dict[str, Any]:
    param = {
        "name": "file",
        "in": "path",
        "required": True,
        "description": "The wheel's name as /database/tools/ lists it, or that name with .sha256",
        "schema": {"type": "string"},
        "example": "gomoku_party_archive-1.0.0-py3-none-any.whl",
    }
    body: dict[str, Any] = {"application/zip": {}, "text/plain": {}}
    operation = {
        "summary": "The downloaders' wheel (pip install <this URL>) or its checksum line",
        "parameters": [param, *_CONDITIONAL, *_RANGE],
        "responses": {
            "200": {"description": "The whole file", "headers": _CACHE_HEADERS, "content": body},
            "206": {"description": "The one requested range", "content": body},
            "304": _NOT_MODIFIED,
            "404": {"description": "No such tool file", "content": _JSON_ERROR},
            "412": {"description": "A precondition failed", "content": _JSON_ERROR},
            "416": {"description": "The range is not satisfiable", "content": _JSON_ERROR},
        },
    }
    return _get_and_head(operation, "ToolFile")


def _bulk(summary: str, op_id: str, media: str) -> dict[str, Any]:
    operation = {
        "summary": summary,
        "parameters": [_header("Accept-Encoding", "gzip is used when accepted"), *_CONDITIONAL],
        "responses": {
            "200": {"description": summary, "headers": _CACHE_HEADERS, "content": {media: {}}},
            "304": _NOT_MODIFIED,
            "412": {"description": "If-Match did not match", "content": _JSON_ERROR},
        },
    }
    return _get_and_head(operation, op_id)


def _page(summary: str, op_id: str) -> dict[str, Any]:
    operation = {
        "summary": summary,
        "parameters": _CONDITIONAL[:2],
        "responses": {
            "200": {"description": summary, "content": {"text/html": {}}},
            "304": _NOT_MODIFIED,
        },
    }
    return _get_and_head(operation, op_id)


_YEAR_PARAM = {
    "name": "year",
    "in": "path",
    "required": True,
    "schema": {"type": "string", "pattern": "^[0-9]{4}$"},
    "example": "2026",
}


def _year_page() -> dict[str, Any]:
    operation = {
        "summary": "A year's monthly archives with their statistics",
        "parameters": [
            _YEAR_PARAM,
            *_CONDITIONAL[:2],
        ],
        "responses": {
            "200": {"description": "The year's page", "content": {"text/html": {}}},
            "304": _NOT_MODIFIED,
            "404": {"description": "No month of that year is published", "content": _JSON_ERROR},
        },
    }
    return _get_and_head(operation, "YearPage")


def build_document() -> dict[str, Any]:
    manifest = _get_and_head(_manifest_operation(), "Manifest")
    alias = _get_and_head(_manifest_operation(), "ManifestAlias")
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Gomoku Party archive API",
            "version": "1.0.0",
            "description": "Public, read-only: monthly SGF archives of ranked freestyle games "
            f"in the {PROFILE} profile, their manifest and checksums. CC0 1.0.",
            "license": {"name": "CC0 1.0 Universal", "identifier": LICENSE},
        },
        "paths": {
            "/api/v1/database": manifest,
            "/api/v1/database/manifest.json": alias,
            "/api/v1/database/sha256sums.txt": _bulk(
                "<sha256>  <file> per current file and its Parquet companion, newest month "
                "first (sha256sum -c)",
                "Sha256Sums",
                "text/plain",
            ),
            "/api/v1/database/list.txt": _bulk(
                "The absolute download URL of every current file (wget -i, aria2c -i)",
                "UrlList",
                "text/plain",
            ),
            "/api/v1/database/parquet.txt": _bulk(
                "The absolute download URL of every current file's Parquet companion (for "
                "data tools that read a list of URLs, and wget -i)",
                "ParquetList",
                "text/plain",
            ),
            "/api/v1/database/feed.atom": _bulk(
                "Atom 1.0 feed of publications and rebuilds", "Feed", "application/atom+xml"
            ),
            "/api/v1/database/files/{file}": _get_and_head(
                _file_operation(
                    "An archive file (gzip), or its Parquet companion",
                    "application/gzip",
                    "application/vnd.apache.parquet",
                ),
                "ArchiveFile",
            ),
            "/api/v1/database/files/{file}.sha256": _get_and_head(
                _file_operation("A file's checksum line", "text/plain"), "ChecksumFile"
            ),
            "/api/v1/database/files/{file}.torrent": _get_and_head(
                _torrent_operation(), "TorrentFile"
            ),
            "/api/v1/openapi.json": _openapi(),
            "/": _root(),
            "/database": _redirect(
                "Sends to /database/", "DatabaseRedirect", "301", _CONDITIONAL[:0]
            ),
            "/database/": _page("Public database page", "DatabasePage"),
            "/database/profile": _page("Profile documentation page", "ProfilePage"),
            "/database/{year}/": _year_page(),
            "/database/{year}": _redirect(
                "Sends to the year's page, /database/{year}/",
                "YearRedirect",
                "301",
                [_YEAR_PARAM],
            ),
            "/database/files/": _page(
                "Every current file, its Parquet companion and their .sha256 as relative "
                "links: the index rclone and wget --mirror --no-parent walk",
                "FileIndex",
            ),
            "/database/files/{file}": _get_and_head(
                _file_operation(
                    "An archive file (gzip) or its Parquet companion, as under "
                    "/api/v1/database/files/",
                    "application/gzip",
                    "application/vnd.apache.parquet",
                ),
                "MirroredArchiveFile",
            ),
            "/database/files/{file}.sha256": _get_and_head(
                _file_operation("A file's checksum line", "text/plain"),
                "MirroredChecksumFile",
            ),
            "/database/tools/": _page(
                "The downloaders' wheel, its SHA-256 and the pip and pipx lines (a pip "
                "find-links page too)",
                "ToolsPage",
            ),
            "/database/tools/{file}": _tool_file(),
            "/robots.txt": _simple(
                "Crawling rules (the operators' area is excluded)", "Robots", "text/plain"
            ),
            "/favicon.ico": _simple("The site's icon", "Favicon", "image/vnd.microsoft.icon"),
            "/healthz": _simple("Liveness", "Health", "application/json"),
            "/readyz": _simple("Readiness", "Ready", "application/json", ("200", "503")),
            "/metrics": _simple("Prometheus metrics", "Metrics", "text/plain"),
        },
        "components": {
            "schemas": {
                "Manifest": _MANIFEST,
                "Month": _MONTH,
                "PreviousFile": _PREVIOUS_FILE,
                "ParquetFile": _PARQUET_FILE,
                "PreviousZeroGameListing": _PREVIOUS_ZERO_GAME_LISTING,
                "MonthStats": _MONTH_STATS,
                "Error": {
                    "type": "object",
                    "required": ["error", "message"],
                    "properties": {"error": {"type": "string"}, "message": {"type": "string"}},
                },
            }
        },
    }
