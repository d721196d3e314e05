"""What a JSON body holds, counted from its bytes before any parser builds it.

A parser's time grows with the values it builds, not with the bytes it reads: 16 MB of `{"a":[0]}`
takes seconds to parse, in C or in Rust, holding the GIL the while (so no other request, not even
/healthz, is answered), where 16 MB of one string takes milliseconds. So a body is measured first and
refused unparsed when it holds more than any request of the contract needs:

    bytes.count of { [ , :        an upper bound (brackets and commas inside strings count too)
      within every bound  ─► parse
      over one            ─► count again with the strings taken out (a regex, one slice at a time;
                             a large body on a worker thread, so the loop answers between slices)
                             ─► arrays and objects over MAX_CONTAINERS, or items over MAX_ITEMS: 413
                             ─► nested deeper than MAX_JSON_DEPTH: 400 json_too_deep
A body that is not JSON is left to its parser, which says where it breaks.
"""

import re
from dataclasses import dataclass

from reactstep.service.errors import JSONTooDeep, PayloadTooLarge
from reactstep.service.limits import MAX_CONTAINERS, MAX_ITEMS, MAX_JSON_DEPTH
from reactstep.service.worker_threads import on_worker

# A JSON string, escapes included; unrolled ("[^"\\]*" runs between escapes) so a long one is one step.
STRING = re.compile(rb'"[^"\\]*+(?:\\.[^"\\]*+)*+"')
# Text outside strings and whole strings: it ends where a string begins that does not end.
WHOLE = re.compile(rb'(?:[^"]++|"[^"\\]*+(?:\\.[^"\\]*+)*+")*+')
NOT_BRACKET = re.compile(rb"[^\[\]{}]++")
SLICE = 1 << 20  # ~10-20 ms of regex a slice: the most the loop waits for a worker's measuring
ON_WORKER_FROM = 256 * 1024  # a smaller body is measured within ~4 ms (16 MB took 0.25 s): on the loop


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
    deeper than MAX_JSON_DEPTH (400), without parsing it; a large body is measured off the event loop."""
    if _surely_within(raw):
        return
    if len(raw) >= ON_WORKER_FROM:
        await on_worker(check_measured, raw)
    else:
        check_measured(raw)


def _surely_within(raw: bytes) -> bool:
    """Whether counting every bracket and separator, strings too, already stays within the bounds."""
    containers = raw.count(b"{") + raw.count(b"[")
    return containers <= MAX_JSON_DEPTH and raw.count(b",") + raw.count(b":") <= MAX_ITEMS


def check_measured(raw: bytes) -> None:
    """check_json_shape's precise count, strings taken out; blocking (a worker thread's job for 1 MB+)."""
    shape = measure(raw)
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
    """Count raw's structure outside its strings, slice_bytes at a time; the brackets are kept only
    while there are few enough (MAX_CONTAINERS) for the nesting to be worth reading."""
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
    return Shape(containers, items, b"".join(brackets) if containers <= MAX_CONTAINERS else b"")


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
