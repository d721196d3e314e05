"""A request body: read and bounded by admission, measured, parsed into a pydantic model; errors as our codes.

    received_body(scope)      the bytes admission read and bounded, or the refusal it kept (413, 400)
    parse_model(raw, model)   empty ─► {} when allowed, else 400 invalid_json
                              ─► measured (check_json_shape) ─► parsed and validated by pydantic in
                              one pass ─► its secrets remembered for the request (redaction)
                              a body pydantic cannot read is looked at again, to name the string
                              in it that is not UTF-8 text

A parser's time grows with the values it builds, not with the bytes it reads: 16 MB of `{"a":[0]}`
takes seconds to parse, in C or in Rust, holding the GIL the while (so no other request, not even
/healthz, is answered), where 16 MB of one string takes milliseconds. So a body is measured first and
refused unparsed when it holds more than any request of the contract needs:

    bytes.count of { [ , :        an upper bound (brackets and commas inside strings count too)
      within every bound  ─► parse
      over one            ─► count again with the strings taken out (a regex, one slice at a time)
                             ─► arrays and objects over MAX_CONTAINERS, or items over MAX_ITEMS: 413
                             ─► nested deeper than MAX_JSON_DEPTH: 400 json_too_deep
A body that is not JSON is left to its parser, which says where it breaks.

A large body is measured (and, when it is not text, looked at again) in slices on the event loop,
which answers other requests between them: a slice is ~3-5 ms of regex. On a worker thread the loop
waits about as long (the regex holds the GIL), and each hop costs its own ~40 us; bench/stalls.py
measures the stall end to end.
"""

import asyncio
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails
from starlette.requests import Request
from starlette.types import Scope

from reactstep.contract.common import escaped_bytes
from reactstep.service.errors import (
    HistoryTooLong,
    InvalidJSON,
    JSONTooDeep,
    PayloadTooLarge,
    ServiceError,
    ValidationFailed,
)
from reactstep.service.http.admission import BODY
from reactstep.service.limits import MAX_CONTAINERS, MAX_ITEMS, MAX_JSON_DEPTH
from reactstep.service.redaction import remember_request_secrets
from reactstep.tools.errors import UnsafePath

Model = TypeVar("Model", bound=BaseModel)

# A JSON string, escapes included; unrolled ("[^"\\]*" runs between escapes) so a long one is one step.
STRING = re.compile(rb'"[^"\\]*+(?:\\.[^"\\]*+)*+"')
# Text outside strings and whole strings: it ends where a string begins that does not end.
WHOLE = re.compile(rb'(?:[^"]++|"[^"\\]*+(?:\\.[^"\\]*+)*+")*+')
NOT_BRACKET = re.compile(rb"[^\[\]{}]++")
SLICE = 1 << 18  # ~3-5 ms of regex a slice: the most the loop waits for the measuring
STRINGS_A_SLICE = 20_000  # the strings looked at between two turns of the loop (~5 ms)


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
    raw = received_body(request.scope)
    return await parse_model(raw, model, allow_empty, path_keys)


async def parse_model(
    raw: bytes, model: type[Model], allow_empty: bool = False, path_keys: str | None = None
) -> Model:
    """A raw body parsed as `model` (its secrets remembered for the request), or a 4xx ServiceError.

    The body is measured before it is parsed (too many values or too deep is refused unparsed).
    Text in it must be valid UTF-8 (no raw bytes that are not, no lone surrogate escape): a string
    that is not is refused naming where it is and its bytes, escaped; under the object field
    `path_keys`, whose keys are project paths, as 422 invalid_path naming that key.
    """
    if allow_empty and not raw.strip():
        body = validated(model, {})
    elif not raw:
        raise InvalidJSON("the request body is empty; send a JSON object")
    else:
        await check_json_shape(raw)
        try:
            body = validated(model, raw)
        except InvalidJSON:
            await refuse_non_text(raw, path_keys)
            raise
    remember_request_secrets(body)
    return body


def validated(model: type[Model], payload: Any) -> Model:
    """pydantic parses the JSON (bytes) and validates it in one pass; its errors as ours."""
    try:
        if isinstance(payload, bytes):
            return model.model_validate_json(payload)
        return model.model_validate(payload)
    except ValidationError as exc:
        errors = exc.errors(include_input=False, include_url=False)
        if invalid := [error for error in errors if error["type"] == "json_invalid"]:
            raise InvalidJSON(f"the request body is not valid JSON: {invalid[0]['msg'][:200]}") from exc
        raise refusal(errors) from exc


# What a body holds, counted from its bytes


@dataclass(frozen=True)
class Shape:
    """Counts of a JSON text's structure, strings left out."""

    containers: int
    """Arrays and objects."""
    items: int
    """Commas and colons: about the array items and object keys, what a parser builds one by one."""
    brackets: bytes
    """The brackets alone, in order (empty when not counted): what the nesting is read from."""


async def check_json_shape(raw: bytes) -> None:
    """Refuse a body with more arrays, objects or items than MAX_CONTAINERS / MAX_ITEMS (413) or nested
    deeper than MAX_JSON_DEPTH (400), without parsing it; a large body is measured a slice at a time,
    the event loop answering others between slices."""
    containers = raw.count(b"{") + raw.count(b"[")
    if containers <= MAX_JSON_DEPTH and raw.count(b",") + raw.count(b":") <= MAX_ITEMS:
        return  # counting every bracket and separator, strings too, already stays within the bounds
    shape = Shape(0, 0, b"")
    for counted in measuring(raw):
        shape = counted
        if len(raw) > SLICE:
            await asyncio.sleep(0)
    if shape.containers > MAX_CONTAINERS:
        raise PayloadTooLarge(
            f"the request body holds {shape.containers:,} arrays and objects; the limit is {MAX_CONTAINERS:,}"
        )
    if shape.items > MAX_ITEMS:
        raise PayloadTooLarge(
            f"the request body holds {shape.items:,} items and keys; the limit is {MAX_ITEMS:,}"
        )
    if nesting(shape.brackets) > MAX_JSON_DEPTH:
        raise JSONTooDeep(f"the request body nests arrays and objects deeper than {MAX_JSON_DEPTH} levels")


def measure(raw: bytes, slice_bytes: int = SLICE) -> Shape:
    """The structure of raw outside its strings (measuring's last count)."""
    shape = Shape(0, 0, b"")
    for counted in measuring(raw, slice_bytes):
        shape = counted
    return shape


def measuring(raw: bytes, slice_bytes: int = SLICE) -> Iterator[Shape]:
    """raw's structure outside its strings counted slice_bytes at a time: the count so far after each
    slice. The brackets are kept only while there are few enough (MAX_CONTAINERS) for the nesting to
    be worth reading."""
    containers = items = 0
    brackets: list[bytes] = []
    start = 0
    while start < len(raw):
        end = _slice_end(raw, start, slice_bytes)
        bare = STRING.sub(b"", raw[start:end])
        containers += bare.count(b"{") + bare.count(b"[")
        items += bare.count(b",") + bare.count(b":")
        if containers <= MAX_CONTAINERS:
            brackets.append(NOT_BRACKET.sub(b"", bare))
        start = end
        yield Shape(containers, items, b"".join(brackets) if containers <= MAX_CONTAINERS else b"")


def _slice_end(raw: bytes, start: int, slice_bytes: int) -> int:
    """Where the slice from start ends: about slice_bytes on, never inside a string (a string that
    starts the slice and runs past it makes the slice; one that never ends, the rest of the body)."""
    matched = WHOLE.match(raw, start, start + slice_bytes)  # it matches at least the empty text
    whole = matched.end() if matched else start
    if whole > start or whole >= len(raw):
        return whole
    string = STRING.match(raw, start)
    return len(raw) if string is None else string.end()


def nesting(brackets: bytes) -> int:
    """The deepest nesting of a sequence of brackets."""
    depth = deepest = 0
    for byte in brackets:
        if byte in b"[{":
            depth += 1
            deepest = max(deepest, depth)
        else:
            depth -= 1
    return deepest


# Text that is not text


async def refuse_non_text(raw: bytes, path_keys: str | None) -> None:
    """Refuse the first string (key or value) of a body pydantic could not read that is not valid UTF-8
    text, if it is JSON once such bytes are surrogate escapes; the loop answers others every
    STRINGS_A_SLICE strings."""
    try:
        payload = json.loads(raw.decode("utf-8", "surrogateescape"))
    except (ValueError, RecursionError):
        return
    for number, (where, text) in enumerate(_strings(payload, "")):
        if number % STRINGS_A_SLICE == STRINGS_A_SLICE - 1:
            await asyncio.sleep(0)
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


# A body that does not match its model

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
