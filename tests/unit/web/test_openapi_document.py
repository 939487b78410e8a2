"""The OpenAPI document describes exactly the routes the app registers."""

from __future__ import annotations

import hashlib
import json
import re

import pytest
import schemathesis
from schemathesis.core.result import Ok

from gomoku_archive.settings import Settings
from gomoku_archive.web.api.openapi import DOCUMENT_REVISED, build_document
from gomoku_archive.web.app import create_app


def registered_routes(settings: Settings | None = None) -> set[tuple[str, str]]:
    app = create_app(settings or Settings())  # nothing is opened before the app starts
    found = set()
    for route in app.router.routes():
        info = route.resource.get_info() if route.resource is not None else {}
        path = info.get("path") or info.get("formatter", "")
        found.add((route.method, re.sub(r"\{(\w+)(:[^}]*)?\}", r"{\1}", path)))
    return found


def documented_routes() -> set[tuple[str, str]]:
    document = build_document()
    return {
        (method.upper(), path)
        for path, operations in document["paths"].items()
        for method in operations
    }


def test_the_router_and_the_document_agree_both_ways() -> None:
    """Every route and method the router answers, HEAD and the redirects included, is in the
    document, and the document has nothing the router does not answer."""
    registered = registered_routes()
    documented = documented_routes()
    assert sorted(registered - documented) == []
    assert sorted(documented - registered) == []
    assert ("HEAD", "/robots.txt") in documented and ("GET", "/") in documented


def test_only_the_operators_area_is_left_out() -> None:
    """/ops/ (with OPS_TOKEN) is the operators' and documented in docs/operators/running.md;
    /metrics on a port of its own leaves the public port."""
    with_ops = registered_routes(Settings(ops_token="t" * 32))
    assert {path for _, path in with_ops - documented_routes()} and all(
        path.startswith("/ops") for _, path in with_ops - documented_routes()
    )
    apart = registered_routes(Settings(metrics_port=9100))
    assert documented_routes() - apart == {("GET", "/metrics"), ("HEAD", "/metrics")}


DOCUMENT_HASH = "dc82f9ad8d448f37"


def test_the_document_date_moves_with_the_document() -> None:
    """Last-Modified of /api/v1/openapi.json is DOCUMENT_REVISED: a changed document with the
    old date would let a mirror keep the old one (wget -N). Change both, and this hash."""
    text = json.dumps(build_document(), sort_keys=True).encode()
    assert (hashlib.sha256(text).hexdigest()[:16], DOCUMENT_REVISED.date().isoformat()) == (
        DOCUMENT_HASH,
        "2026-12-07",
    )


def test_only_get_and_head_are_public() -> None:
    assert {method for method, _ in registered_routes()} == {"GET", "HEAD"}


@pytest.mark.slow  # schemathesis loads and checks the document: seconds
def test_the_document_is_valid_openapi_3_1() -> None:
    document = json.loads(json.dumps(build_document()))
    assert document["openapi"] == "3.1.0"
    schema = schemathesis.openapi.from_dict(document)
    results = list(schema.get_all_operations())
    assert all(isinstance(r, Ok) for r in results)
    operations = [r.ok() for r in results if isinstance(r, Ok)]
    assert len(operations) == len(documented_routes())
    assert len({op.label for op in operations}) == len(operations)
