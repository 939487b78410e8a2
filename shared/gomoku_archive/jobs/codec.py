"""Jobs and results as JSON, never pickle: the same ``serialize`` / ``deserialize`` pair is given
to the worker and to every client pool. A failed job's exception is stored as
``{"error": <type name>, "message": <text>}``."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any


def _jsonable(value: object) -> object:
    if isinstance(value, BaseException):
        return {"error": type(value).__name__, "message": str(value)[:2000]}
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, set | frozenset | tuple):
        return list(value)
    raise TypeError(f"{type(value).__name__} is not a job argument or result type")


def serialize(data: dict[str, Any]) -> bytes:
    """arq's ``job_serializer``: jobs and results as compact JSON."""
    return json.dumps(data, default=_jsonable, separators=(",", ":")).encode()


def deserialize(raw: bytes) -> dict[str, Any]:
    """arq's ``job_deserializer``."""
    data = json.loads(raw)
    if not isinstance(data, dict):
        raise ValueError("a job must be a JSON object")
    return data
