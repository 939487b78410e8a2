"""The manifest documents the code builds (with statistics, without, for a month without
games) are valid under the OpenAPI document's schema, and the schema is strict enough to
refuse a stats object of the wrong shape."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import jsonschema
import pytest

from gomoku_archive.catalog.manifest import MonthSummary, build_manifest
from gomoku_archive.demo.examples import example_records
from gomoku_archive.profile.stats import EMPTY, StatsCounter
from gomoku_archive.web.api.openapi import build_document
from tests.support import add_record

SUMMARY = MonthSummary(
    month="2026-08",
    games=200,
    file_name="gomoku-party-2026-08-0123456789abcdef.sgf.gz",
    bytes=123,
    uncompressed_bytes=456,
    sha256="0123456789abcdef" * 4,
    published_at=datetime(2026, 9, 1, 0, 10, tzinfo=UTC),
    candidate_games=200,
    excluded_games=0,
    exclusions={},
    results={},
)


def validator() -> jsonschema.Draft202012Validator:
    document = json.loads(json.dumps(build_document()))
    schema = {"$ref": "#/components/schemas/Manifest", "components": document["components"]}
    return jsonschema.Draft202012Validator(schema)


def manifest() -> dict[str, Any]:
    counter = StatsCounter()
    for record in example_records():
        add_record(counter, record)
    zero = replace(SUMMARY, month="2026-09", games=0, file_name=None, sha256=None, stats=EMPTY)
    old = replace(SUMMARY, month="2026-07", stats=None)
    return build_manifest([replace(SUMMARY, stats=counter.result()), zero, old])


def test_months_with_without_and_with_empty_stats_are_valid() -> None:
    document = json.loads(json.dumps(manifest()))
    validator().validate(document)
    assert [m["stats"] is None for m in document["months"]] == [False, False, True]


@pytest.mark.parametrize(
    "damage",
    [
        lambda s: s.pop("winners"),
        lambda s: s["firstMoves"].pop(),
        lambda s: s["allMoves"][3].append(0),
        lambda s: s["length"].update(median=0),
        lambda s: s["ratings"].update(p10="1200"),
        lambda s: s["timeControls"].update({"60": -1}),
    ],
)
def test_a_stats_object_of_the_wrong_shape_is_refused(damage: Any) -> None:
    document = json.loads(json.dumps(manifest()))
    damage(document["months"][0]["stats"])
    assert not validator().is_valid(document)
