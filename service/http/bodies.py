"""A request body, read and bounded by admission, parsed into a pydantic model; errors as our codes."""

import json
from collections.abc import Iterator
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Scope

from reactstep.contract.common import escaped_bytes
from reactstep.service.errors import HistoryTooLong, InvalidJSON, ServiceError, ValidationFailed
from reactstep.service.http.admission import BODY
from reactstep.service.http.json_shape import check_json_shape
from reactstep.service.redaction import remember_request_secrets
from reactstep.service.worker_threads import on_worker
from reactstep.tools.errors import UnsafePath

Model = TypeVar("Model", bound=BaseModel)


def received_body(scope: Scope) -> bytes:
    """The body admission read and bounded (its bytes), or the refusal it kept for the route (413, 400)."""
    body: bytes | ServiceError = scope[BODY]
    if isinstance(body, ServiceError):
        raise body
    return body


async def read_model(
    request: Request, model: type[Model], allow_empty: bool = False, path_keys: str | None = None
) -> Model:
    """The body parsed as `model`, or a 4xx ServiceError saying what was wrong."""
    return await parse_model(received_body(request.scope), model, allow_empty, path_keys)


async def parse_model(
    raw: bytes, model: type[Model], allow_empty: bool = False, path_keys: str | None = None
) -> Model:
    """A raw body parsed as `model` (its secrets remembered for the request), or a 4xx ServiceError.

    The body is measured before it is parsed (json_shape: too many values or too deep is refused
    unparsed). Text in it must be valid UTF-8 (no raw bytes that are not, no lone surrogate
    escape): a string that is not is refused naming where it is and its bytes, escaped; under the
    object field `path_keys`, whose keys are project paths, as 422 invalid_path naming that key.
    """
    if allow_empty and not raw.strip():
        body = _validated(model, {})
    elif not raw:
        raise InvalidJSON("the request body is empty; send a JSON object")
    else:
        await check_json_shape(raw)
        body = await _parsed(raw, model, path_keys)
    remember_request_secrets(body)
    return body


async def _parsed(raw: bytes, model: type[Model], path_keys: str | None) -> Model:
    """pydantic parses the JSON and validates it in one pass; a body it cannot read is looked at
    again (on a worker thread: that walk is Python) to say which string is not text."""
    try:
        return _validated(model, raw)
    except InvalidJSON:
        if (lenient := await on_worker(_decoded_leniently, raw)) is not None:
            await on_worker(_refuse_non_text, lenient, path_keys)
        raise


def _validated(model: type[Model], payload: Any) -> Model:
    try:
        if isinstance(payload, bytes):
            return model.model_validate_json(payload)
        return model.model_validate(payload)
    except ValidationError as exc:
        errors = exc.errors(include_input=False, include_url=False)
        if invalid := [error for error in errors if error["type"] == "json_invalid"]:
            raise InvalidJSON(f"the request body is not valid JSON: {invalid[0]['msg'][:200]}") from exc
        raise refusal(errors) from exc


def _decoded_leniently(body: bytes) -> Any:
    """The body as Python if it is JSON once its bytes that are not UTF-8 are surrogate escapes."""
    try:
        return json.loads(body.decode("utf-8", "surrogateescape"))
    except (ValueError, RecursionError):
        return None


def _refuse_non_text(payload: Any, path_keys: str | None) -> None:
    """Refuse the first string (key or value) of the payload that is not valid UTF-8 text."""
    for where, text in _strings(payload, ""):
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            escaped = escaped_bytes(text)
            if path_keys is not None and where == f"{path_keys} (a key)":
                raise UnsafePath(
                    f"{path_keys}: path {escaped} is not valid UTF-8 text; name files in UTF-8"
                ) from None
            raise InvalidJSON(
                f"the request body holds text that is not valid UTF-8 at {where}: {escaped}"
            ) from None


def _strings(value: Any, where: str) -> Iterator[tuple[str, str]]:
    """Every string of a parsed JSON value with where it is ("a.b[2]", "a (a key)")."""
    if isinstance(value, str):
        yield where or "body", value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield f"{where} (a key)" if where else "body (a key)", key
            yield from _strings(item, f"{where}.{key}" if where else key)
    elif isinstance(value, list):
        for number, item in enumerate(value):
            yield from _strings(item, f"{where}[{number}]")


# At most this many details in a 422: the first failing items say what to fix; one detail per bad item
# of a long list (and per branch of a union) would cost more to build than the request is worth.
MAX_DETAILS = 5
# A list over its bound whose refusal has a code of its own.
TOO_LONG: dict[str, type[ValidationFailed]] = {"conversation_history": HistoryTooLong}


def refusal(errors: "list[ErrorDetails]") -> ValidationFailed:
    """A 422 for a body that does not match its model: a list or map over its bound named with its
    size and the bound, else the first MAX_DETAILS problems."""
    for error in errors:
        if error["type"] == "too_long" and "actual_length" in error.get("ctx", {}):
            field = _field(error)
            limit, size = error["ctx"]["max_length"], error["ctx"]["actual_length"]
            message = f"{field} has {size:,} items; the limit is {limit:,}"
            return TOO_LONG.get(field, ValidationFailed)(
                message, details=[{"field": field, "message": message}]
            )
    return ValidationFailed.naming(describe_errors(errors[:MAX_DETAILS]), len(errors))


def describe_errors(errors: "list[ErrorDetails]") -> list[dict[str, str]]:
    """Where and what, never the offending value (it may hold a key)."""
    return [{"field": _field(error), "message": error["msg"]} for error in errors]


def _field(error: "ErrorDetails") -> str:
    return ".".join(str(part) for part in error["loc"]) or "body"


def model_response(body: BaseModel, exclude_none: bool = False) -> Response:
    """A model as the JSON body of a 200 answer, serialised by pydantic in one pass (no dict between)."""
    return json_response(model_json(body, exclude_none))


def model_json(body: BaseModel, exclude_none: bool = False) -> bytes:
    """A model's JSON, as model_dump_json makes it, in bytes."""
    return body.__pydantic_serializer__.to_json(body, exclude_none=exclude_none)


def json_response(body: bytes, status: int = 200) -> Response:
    """An answer with this JSON body (200 unless told)."""
    return Response(body, status_code=status, media_type="application/json")
