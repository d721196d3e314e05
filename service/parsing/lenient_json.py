"""Nearly-JSON objects, repaired when the repair is unambiguous, and a note saying so.

    strict decode ─ ok ─► value, no note
        └ fails ─► NaN/Infinity, or cut off inside a string or before a value? refused
          ─► a Python literal (single quotes, trailing commas, True/None), read by call_syntax's
             literal walker: fast, and nothing evaluated
          ─► json_repair (missing braces, comments, unquoted keys or values), up to
             MAX_REPAIR_CHARS: it reads a character at a time (~3 ms per KB)
          ─► an object of finite values? ─► value + note

Only this module imports json_repair.
"""

import json
import math
from typing import Any

import json_repair

from reactstep.service.parsing.call_syntax import CallSyntaxError, parse_call

__all__ = ["MAX_REPAIR_CHARS", "STRICT_JSON", "decode_at", "decode_object"]

MAX_REPAIR_CHARS = 16_000


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not allowed in JSON")


# NaN and Infinity are not JSON; arguments holding them could not be sent on to a tool.
STRICT_JSON = json.JSONDecoder(parse_constant=_reject_constant)


def decode_object(text: str) -> tuple[Any, str | None]:
    """The JSON value of text, or the object a repair makes of it; ValueError when neither works."""
    try:
        return STRICT_JSON.decode(text), None
    except RecursionError:
        raise ValueError("the JSON is nested too deeply") from None
    except json.JSONDecodeError as exc:
        problem = str(exc)
        if _cut_short(exc, text):
            raise ValueError(f"{problem}; the JSON ends before its value") from None
    except ValueError as exc:  # NaN or Infinity, which no repair should turn into a number
        raise ValueError(str(exc)) from None
    literal = _python_literal(text)
    if literal is not None:
        return literal, f"The JSON was not valid ({problem}); it was read as a Python literal."
    if len(text) > MAX_REPAIR_CHARS:
        raise ValueError(f"{problem}; at {len(text)} characters it is too long to repair")
    try:
        repaired = json_repair.loads(text, skip_json_loads=True)
    except (ValueError, RecursionError, IndexError):
        raise ValueError(problem) from None
    if not isinstance(repaired, dict) or not repaired or not _finite(repaired):
        raise ValueError(problem)
    return repaired, f"The JSON was not valid ({problem}); it was repaired."


def _python_literal(text: str) -> dict[str, Any] | None:
    """The dict a Python-literal spelling of an object gives, if it is exactly one."""
    try:
        call = parse_call(f"_({text})", 0)
    except CallSyntaxError:
        return None
    if call.end != len(text) + 3 or call.keywords or len(call.positional) != 1:
        return None
    value = call.positional[0]
    return value if isinstance(value, dict) and value and _finite(value) else None


def _cut_short(exc: json.JSONDecodeError, text: str) -> bool:
    """Whether the text stops inside a string or before a value: a guess would invent the rest."""
    if exc.msg.startswith("Unterminated string"):
        return True
    return exc.msg == "Expecting value" and exc.pos >= len(text.rstrip())


def _finite(value: Any) -> bool:
    """Whether no number in value is NaN or infinite (iterative: the value may nest deeply)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            return False
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return True


def decode_at(text: str, pos: int) -> tuple[Any, int, str | None]:
    """The JSON value starting at pos, where it ends, and a note when it took a repair.

    A value that does not decode is repaired up to the fence that closes it, else the end of text.
    """
    try:
        value, end = STRICT_JSON.raw_decode(text, pos)
        return value, end, None
    except RecursionError:
        raise ValueError("the JSON is nested too deeply") from None
    except ValueError:
        pass
    end = _object_end(text, pos)
    value, note = decode_object(text[pos:end].rstrip())
    return value, end, note


def _object_end(text: str, pos: int) -> int:
    """Just past the brace closing the one at pos (quotes of either kind respected); when none
    closes it, the fence that follows, else the end of text."""
    depth, quote, i = 0, "", pos
    while i < len(text):
        char = text[i]
        if quote:
            if char == "\\":
                i += 1
            elif char == quote or char == "\n":
                quote = ""
        elif char in "\"'":
            quote = char
        elif char in "{[":
            depth += 1
        elif char in "}]":
            depth -= 1
            if depth == 0:
                return i + 1
        elif text.startswith("```", i):
            return i
        i += 1
    return len(text)
