"""The OpenAPI document, kept true: schemathesis generates requests for every operation of the
live ``gomoku-archive serve`` (a subprocess over a real PostgreSQL with published archives) and
checks that nothing is a 5xx and every response matches the document.

The server runs in a subprocess because schemathesis calls it with blocking ``requests``; the
database is created once for the module. Cases come from each operation's Hypothesis strategy
rather than the pytest plugin (``schemathesis.pytest.from_fixture``): schemathesis 4.32's lazy
schema sets ``item._nodeid``, which pytest 9 no longer has."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import asyncpg
import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis.checks import not_a_server_error
from schemathesis.core.failures import FailureGroup
from schemathesis.core.result import Ok
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from gomoku_archive.db.migrate import migrate
from gomoku_archive.db.source import create_reference_table
from gomoku_archive.profile.months import Month
from tests.integration.api_support import (
    PG_ADMIN_DSN,
    ServerProcess,
    publish_bytes,
    publish_demo_month,
    random_bytes,
)
from tests.support import pool_from

EXAMPLES = 40
"""Per operation: 15 operations x 40 cases keeps the module well under a minute."""
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
]


@dataclass
class Live:
    server: ServerProcess
    files: list[str]


async def _prepare(dsn: str, name: str) -> list[str]:
    admin = await asyncpg.connect(PG_ADMIN_DSN)
    try:
        await admin.execute(f'CREATE DATABASE "{name}"')
    finally:
        await admin.close()
    async with pool_from(dsn, max_size=2) as pool:
        async with pool.acquire() as conn:
            await migrate(conn)
            await create_reference_table(conn, "games")
        rows = [
            await publish_demo_month(pool, Month(2026, 8), 30),
            await publish_demo_month(pool, Month(2026, 9), 0),
            await publish_bytes(pool, "2026-10", random_bytes(600_000, seed=4)),
            await publish_bytes(pool, "2026-10", random_bytes(9_000, seed=5)),  # supersedes
        ]
    return [r.file_name for r in rows if r.file_name]


async def _drop(name: str) -> None:
    admin = await asyncpg.connect(PG_ADMIN_DSN)
    try:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await admin.close()


@pytest.fixture(scope="module")
def live() -> Iterator[Live]:
    name = "gpa_test_" + uuid.uuid4().hex[:12]
    dsn = PG_ADMIN_DSN.rsplit("/", 1)[0] + "/" + name
    try:
        files = asyncio.run(_prepare(dsn, name))
        server = ServerProcess(dsn)
        server.start()
        try:
            yield Live(server, files)
        finally:
            code = server.stop()
            assert code == 0, server.output.decode()[-3000:]
            assert b'"request_crashed"' not in server.output
    finally:
        asyncio.run(_drop(name))


@pytest.fixture(scope="module")
def api_schema(live: Live) -> schemathesis.BaseSchema:
    return schemathesis.openapi.from_url(live.server.base + "/api/v1/openapi.json")


Operation = schemathesis.APIOperation[Any, Any, Any, Any]


def operations(schema: schemathesis.BaseSchema) -> list[Operation]:
    found = []
    for result in schema.get_all_operations():
        assert isinstance(result, Ok), result
        found.append(result.ok())
    return found


def test_the_document_lists_every_public_operation(api_schema: schemathesis.BaseSchema) -> None:
    labels = {op.label for op in operations(api_schema)}
    assert {
        "GET /api/v1/database",
        "HEAD /api/v1/database",
        "GET /api/v1/database/files/{file}",
        "HEAD /api/v1/database/files/{file}.sha256",
        "GET /database/",
        "GET /readyz",
    } <= labels


def test_every_operation_conforms(live: Live, api_schema: schemathesis.BaseSchema) -> None:
    """Positive generation only: every parameter is a free-form string (header values, the
    file name), so "positive" already covers garbage; schemathesis has nothing to negate."""
    sent = sum(_fuzz(operation, live.files) for operation in operations(api_schema))
    assert sent >= 300  # operations without parameters need one case, the others many


def test_the_checks_catch_a_document_that_lies(live: Live) -> None:
    """The control: with 404 removed from the file operation's responses, the same fuzzing
    must fail (else the test above could pass whatever the server did)."""
    document = requests.get(live.server.base + "/api/v1/openapi.json", timeout=10).json()
    del document["paths"]["/api/v1/database/files/{file}"]["get"]["responses"]["404"]
    lying = schemathesis.openapi.from_dict(document)
    label = "GET /api/v1/database/files/{file}"
    operation = next(op for op in operations(lying) if op.label == label)
    with pytest.raises(FailureGroup) as failed:
        _fuzz(operation, ["not-a-file"], base_url=live.server.base)
    assert "Undocumented status code" in str(failed.value)


def _fuzz(operation: Operation, files: list[str], *, base_url: str | None = None) -> int:
    """Run generated cases of one operation; the number of requests sent."""
    sent = 0

    @given(case=operation.as_strategy(), data=st.data())
    @settings(
        max_examples=EXAMPLES, deadline=None, database=None, suppress_health_check=list(HealthCheck)
    )
    def run(case: schemathesis.Case[Any], data: st.DataObject) -> None:
        # Mostly real file names (else nearly every generated name is a 404), some generated.
        if case.path_parameters and "file" in case.path_parameters:
            case.path_parameters["file"] = data.draw(
                st.sampled_from(files) | st.just(case.path_parameters["file"])
            )
        nonlocal sent
        sent += 1
        case.call_and_validate(base_url=base_url, checks=CHECKS, timeout=10)

    run()
    return sent
