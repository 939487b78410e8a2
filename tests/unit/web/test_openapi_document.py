"""The OpenAPI document describes exactly the routes the app registers."""

from __future__ import annotations

import json
import re

import pytest
import schemathesis
from schemathesis.core.result import Ok

from gomoku_archive.settings import Settings
from gomoku_archive.web.api.openapi import build_document
from gomoku_archive.web.app import create_app


def registered_routes() -> set[tuple[str, str]]:
    app = create_app(Settings())  # nothing is opened before the app starts
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


def test_every_public_route_is_documented() -> None:
    registered = registered_routes()
    documented = documented_routes()
    # /database and /database/{year} only redirect to the page with a slash; HEAD of the
    # probes is implied by GET.
    redirects = ("/database", "/database/{year}")
    undocumented = {r for r in registered - documented if r[0] != "HEAD" and r[1] not in redirects}
    assert undocumented == set()
    assert documented - registered == set()


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
