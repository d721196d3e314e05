"""Read a request body into a pydantic model: bounded in size, strict in shape, errors as our codes."""

import json
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import Receive, Scope

from reactstep.service.errors import (
    BadRequest,
    InvalidJSON,
    JSONTooDeep,
    PayloadTooLarge,
    ServiceError,
    ValidationFailed,
)
from reactstep.service.limits import check_json_depth
from reactstep.service.redaction import remember_request_secrets

Model = TypeVar("Model", bound=BaseModel)
DEFAULT_MAX_DEPTH = 32


async def read_model(
    request: Request,
    model: type[Model],
    max_bytes: int,
    allow_empty: bool = False,
    max_depth: int = DEFAULT_MAX_DEPTH,
) -> Model:
    """The body parsed as `model`, or a 4xx ServiceError saying what was wrong."""
    return parse_model(await read_limited(request, max_bytes), model, allow_empty, max_depth)


def parse_model(
    raw: bytes, model: type[Model], allow_empty: bool = False, max_depth: int = DEFAULT_MAX_DEPTH
) -> Model:
    """A raw body parsed as `model` (its secrets remembered for the request), or a 4xx ServiceError."""
    body = _validated(model, {}) if allow_empty and not raw.strip() else _parsed(raw, model, max_depth)
    remember_request_secrets(body)
    return body


def _parsed(raw: bytes, model: type[Model], max_depth: int) -> Model:
    if not raw:
        raise InvalidJSON("the request body is empty; send a JSON object")
    if raw.count(b"{") + raw.count(b"[") <= max_depth:  # too few openers to nest deeper than allowed:
        return _validated(model, raw)  # pydantic parses the JSON itself, in one pass
    payload = _decode(raw)
    check_json_depth(payload, max_depth)
    return _validated(model, payload)


def check_body_depth(raw: bytes, max_depth: int) -> None:
    """Refuse a JSON body nested deeper than max_depth (400); a body that is not JSON is its reader's."""
    if raw.count(b"{") + raw.count(b"[") <= max_depth:  # too few openers to nest that deep
        return
    try:
        payload = json.loads(raw)
    except RecursionError as exc:
        raise JSONTooDeep(
            f"the request body nests arrays and objects deeper than {max_depth} levels"
        ) from exc
    except ValueError:
        return
    check_json_depth(payload, max_depth)


def _validated(model: type[Model], payload: Any) -> Model:
    try:
        if isinstance(payload, bytes):
            return model.model_validate_json(payload)
        return model.model_validate(payload)
    except ValidationError as exc:
        if invalid := [error for error in exc.errors() if error["type"] == "json_invalid"]:
            raise InvalidJSON(f"the request body is not valid JSON: {invalid[0]['msg'][:200]}") from exc
        raise ValidationFailed(
            "the request body does not match the schema", details=describe_errors(exc)
        ) from exc


async def read_limited(request: Request, max_bytes: int) -> bytes:
    """The raw body, refused as soon as it passes max_bytes (declared or streamed)."""
    return await read_body(request.scope, request.receive, max_bytes)


async def read_body(scope: Scope, receive: Receive, max_bytes: int) -> bytes:
    """read_limited for an ASGI call: the messages `receive` gives, as Request.stream() reads them."""
    declared = _content_length(scope)
    if declared is not None and declared.isdigit() and int(declared) > max_bytes:
        raise PayloadTooLarge(f"the request body is larger than {max_bytes} bytes")
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        kind = message["type"]
        if kind == "http.request":
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > max_bytes:
                raise PayloadTooLarge(f"the request body is larger than {max_bytes} bytes")
            chunks.append(chunk)
            if not message.get("more_body", False):
                return chunks[0] if len(chunks) == 1 else b"".join(chunks)
        elif kind == "http.disconnect":  # nobody will read the answer; still not an internal error
            raise BadRequest("the client closed the connection before sending its whole body")


def _content_length(scope: Scope) -> bytes | None:
    """The Content-Length header's raw value (no Headers object built for one header)."""
    for name, value in scope["headers"]:
        if name == b"content-length":
            return value  # type: ignore[no-any-return]
    return None


def _decode(body: bytes) -> Any:
    try:
        return json.loads(body)
    except RecursionError as exc:
        raise JSONTooDeep("the request body nests arrays and objects too deeply") from exc
    except ValueError as exc:
        raise InvalidJSON(f"the request body is not valid JSON: {str(exc)[:200]}") from exc


def describe_errors(exc: ValidationError) -> list[dict[str, str]]:
    """Where and what, never the offending value (it may hold a key)."""
    return [
        {"field": ".".join(str(part) for part in error["loc"]) or "body", "message": error["msg"]}
        for error in exc.errors(include_input=False, include_url=False, include_context=False)
    ]


def model_response(body: BaseModel, exclude_none: bool = False) -> Response:
    """A model as the JSON body of a 200 answer, serialised by pydantic in one pass (no dict between)."""
    return json_response(model_json(body, exclude_none))


def model_json(body: BaseModel, exclude_none: bool = False) -> bytes:
    """A model's JSON, as model_dump_json makes it, in bytes."""
    return body.__pydantic_serializer__.to_json(body, exclude_none=exclude_none)


def json_response(body: bytes) -> Response:
    """A 200 answer with this JSON body."""
    return Response(body, media_type="application/json")


def error_response(error: ServiceError) -> JSONResponse:
    """A ServiceError's answer: its status, its JSON body and its headers (Retry-After, ...)."""
    return JSONResponse(error.to_body(), status_code=error.status, headers=error.headers())
