"""Read a request body into a pydantic model: bounded in size, strict in shape, errors as our codes."""

import json
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from starlette.requests import Request

from service.errors import InvalidJSON, PayloadTooLarge, ValidationFailed

Model = TypeVar("Model", bound=BaseModel)


async def read_model(
    request: Request, model: type[Model], max_bytes: int, allow_empty: bool = False
) -> Model:
    """The body parsed as `model`, or a 4xx ServiceError saying what was wrong."""
    raw = await read_limited(request, max_bytes)
    payload = {} if allow_empty and not raw.strip() else _decode(raw)
    try:
        return model.model_validate(payload)
    except ValidationError as exc:
        raise ValidationFailed(
            "the request body does not match the schema", details=describe_errors(exc)
        ) from exc


async def read_limited(request: Request, max_bytes: int) -> bytes:
    """The raw body, refused as soon as it passes max_bytes (declared or streamed)."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > max_bytes:
        raise PayloadTooLarge(f"the request body is larger than {max_bytes} bytes")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > max_bytes:
            raise PayloadTooLarge(f"the request body is larger than {max_bytes} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


def _decode(body: bytes) -> Any:
    if not body:
        raise InvalidJSON("the request body is empty; send a JSON object")
    try:
        return json.loads(body)
    except (ValueError, RecursionError) as exc:
        raise InvalidJSON(f"the request body is not valid JSON: {_short(exc)}") from exc


def _short(exc: BaseException) -> str:
    return "nested too deeply" if isinstance(exc, RecursionError) else str(exc)[:200]


def describe_errors(exc: ValidationError) -> list[dict[str, str]]:
    """Where and what, never the offending value (it may hold a key)."""
    return [
        {"field": ".".join(str(part) for part in error["loc"]) or "body", "message": error["msg"]}
        for error in exc.errors(include_input=False, include_url=False, include_context=False)
    ]
