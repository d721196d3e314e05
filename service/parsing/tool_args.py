"""A tool call's arguments as a reply writes them, not yet named by the tool's schema (binding.py does).

    call literals | Action Input text | JSON "action_input" / "arguments" ─► ToolInput

Every complaint is an ArgumentError addressed to the model: reading an input gives a whole sentence.
"""

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from reactstep.service.parsing.lenient_json import STRICT_JSON, decode_at, decode_object

__all__ = [
    "STRICT_JSON",
    "ArgumentError",
    "ToolInput",
    "arguments_value",
    "arguments_value_noted",
    "input_value",
    "input_value_noted",
    "tool_input",
]

# LlamaIndex-style drift: the JSON input wrapped in the name of a tool class, e.g. SearchTool({...}).
_WRAPPED = re.compile(r"([A-Za-z_]\w*)\((\{.*\})\)", re.DOTALL)
_BAD_ARGUMENTS = '"arguments" must be a JSON object (or a string holding one).'


class ArgumentError(ValueError):
    """The arguments are malformed or do not fit the tool; the message is for the model."""


@dataclass(frozen=True)
class ToolInput:
    """A tool call's arguments as the reply wrote them, not yet named by the tool's schema."""

    positional: tuple[Any, ...] = ()
    keywords: Mapping[str, Any] = field(default_factory=dict)
    # One value given without a name: plain text, or a JSON number, boolean or list.
    text: Any = None
    notes: tuple[str, ...] = ()  # repairs made while reading the input


def input_value(content: str) -> Any:
    """The value of an Action Input: a JSON object, a JSON string, or else the plain text itself."""
    return input_value_noted(content)[0]


def input_value_noted(content: str) -> tuple[Any, tuple[str, ...]]:
    """The value of an Action Input (a JSON object, a JSON string, or else the plain text), with notes.

    An object that is nearly JSON is repaired (lenient_json.py), and text after it dropped;
    braces around words with no "key: value" in them are plain text, as is a quoted string
    missing its closing quote.
    """
    notes: tuple[str, ...] = ()
    wrapped = _WRAPPED.fullmatch(content)
    if wrapped:
        content = wrapped[2]
        notes = (f"The Action Input wrapped its JSON in {wrapped[1]}(...); the JSON inside was used.",)
    if content.startswith("{") and ":" in content:
        try:
            value, end, note = decode_at(content, 0)
        except (ValueError, RecursionError) as exc:
            raise ArgumentError(f"Action Input is not a valid JSON object ({exc}).") from None
        notes += (note,) if note else ()
        rest = content[end:].strip()
        if rest:
            notes += (f"Text after the Action Input's JSON was dropped: {shorten(rest, 40)!r}.",)
        return value, notes
    if content.startswith('"'):
        try:
            decoded = STRICT_JSON.decode(content)
        except (ValueError, RecursionError):
            if content.count('"') == 1:
                return content[1:].strip(), ("The unbalanced quote opening the Action Input was dropped.",)
            return content, ()
        return (decoded, ()) if isinstance(decoded, str) else (content, ())
    return content, notes


def arguments_value(value: Any) -> Any:
    """The "arguments" of a function-call blob; APIs often send them JSON-encoded, or as a lone value."""
    return arguments_value_noted(value)[0]


def arguments_value_noted(value: Any) -> tuple[Any, tuple[str, ...]]:
    """The "arguments" of a function-call blob, and a note when its JSON text took a repair."""
    if isinstance(value, str) and value.lstrip().startswith(("{", "[")):
        try:
            decoded, note = decode_object(value.strip())
        except ValueError as exc:
            raise ArgumentError(f"{_BAD_ARGUMENTS} Its JSON does not decode: {exc}.") from None
        return decoded, (note,) if note else ()
    return value, ()


def tool_input(tool: str, value: Any) -> ToolInput:
    """The input a JSON value gives a tool: an object of arguments, one lone value, or nothing."""
    if value is None or isinstance(value, dict):
        return ToolInput(keywords=value or {})
    if isinstance(value, str | int | float | list):
        return ToolInput(text=value)
    raise ArgumentError(f"The input for {tool} must be a JSON object of arguments or plain text.")


def shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
