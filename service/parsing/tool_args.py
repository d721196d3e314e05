"""A tool call's arguments: from the forms a reply writes them in to a dict valid for the tool.

    call literals | Action Input text | JSON "action_input" / "arguments" ─► ToolInput
    ToolInput.bind_noted(schema, aliases) ─► a lone value (text, number, list) to the only, else the
        first required, parameter ─► positional ones in property order ─► nesting limit
        ─► names and types that drifted (arg_drift.py, each with a note) ─► jsonschema

Every complaint is an ArgumentError addressed to the model: reading an input gives a whole
sentence; bind() gives clauses that the caller prefixes with the tool's name.
"""

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from jsonschema import Draft202012Validator  # type: ignore[import-untyped]

from reactstep.service.parsing.arg_drift import Aliases, fix_drift
from reactstep.service.parsing.call_syntax import MAX_NESTING
from reactstep.service.parsing.lenient_json import STRICT_JSON, decode_at, decode_object
from reactstep.tools.recent import Recent

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

_MAX_PROBLEMS = 4
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

    def bind(self, schema: Mapping[str, Any]) -> dict[str, Any]:
        """The arguments by name, valid for the schema; plain text fills one parameter."""
        return self.bind_noted(schema)[0]

    def bind_noted(
        self, schema: Mapping[str, Any], aliases: Aliases | None = None
    ) -> tuple[dict[str, Any], list[str]]:
        """The arguments by name, valid for the schema, and a note for each repair it took."""
        notes = list(self.notes)
        if self.text is not None:
            name = _text_parameter(schema)
            args = {name: self.text}
            if not isinstance(self.text, str):
                notes.append(f"The input {_shorten(json.dumps(self.text), 40)} was given to '{name}'.")
        else:
            args = _by_name(schema, self.positional, self.keywords)
        if _too_deep(args):
            raise ArgumentError(f"arguments are nested more than {MAX_NESTING} levels deep")
        args, drift = fix_drift(args, schema, aliases or {})
        problems = _problems(args, schema)
        if problems:
            raise ArgumentError("; ".join(problems))
        return args, notes + drift


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
            notes += (f"Text after the Action Input's JSON was dropped: {_shorten(rest, 40)!r}.",)
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


def _by_name(
    schema: Mapping[str, Any], positional: tuple[Any, ...], keywords: Mapping[str, Any]
) -> dict[str, Any]:
    """Keyword arguments plus positional ones named in the schema's property order."""
    names = list(schema.get("properties", {}))
    if len(positional) > len(names):
        raise ArgumentError(f"takes at most {len(names)} positional argument(s), got {len(positional)}")
    args = dict(zip(names, positional, strict=False))
    for name, value in keywords.items():
        if name in args:
            raise ArgumentError(f"argument '{name}' is given twice")
        args[name] = value
    return args


def _text_parameter(schema: Mapping[str, Any]) -> str:
    """The parameter plain-text input fills: the only one, else the first required one."""
    names = list(schema.get("properties", {}))
    required = schema.get("required", [])
    if len(names) == 1:
        return str(names[0])
    if required:
        return str(required[0])
    raise ArgumentError("plain-text input is ambiguous for this tool; pass name=value arguments")


def _too_deep(value: Any) -> bool:
    """Whether containers nest beyond MAX_NESTING (iterative: JSON input can be very deep)."""
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_NESTING:
            return True
        if isinstance(item, dict):
            stack.extend((child, depth + 1) for child in item.values())
        elif isinstance(item, list):
            stack.extend((child, depth + 1) for child in item)
    return False


def _problems(args: dict[str, Any], schema: Mapping[str, Any]) -> list[str]:
    """Short messages for everything wrong with args; unknown names are refused by default."""
    properties = schema.get("properties", {})
    problems = [
        f"missing required argument '{name}'" for name in schema.get("required", []) if name not in args
    ]
    unknown = [name for name in args if name not in properties]
    # A tool call with a stray argument is a model mistake unless the schema says extras are fine.
    if unknown and schema.get("additionalProperties", False) is False:
        valid = ", ".join(properties) or "none"
        problems.append(f"unknown argument {', '.join(map(repr, unknown))} (valid: {valid})")
    errors = _validator(schema).iter_errors(args)
    for error in sorted(errors, key=lambda e: (_path(e.absolute_path), str(e.message))):
        # Top-level missing and unknown names were reported above, in the model's terms.
        if error.absolute_path or error.validator not in ("required", "additionalProperties"):
            problems.append(_describe_error(error))
    unique = list(dict.fromkeys(problems))
    extra = len(unique) - _MAX_PROBLEMS
    return unique[:_MAX_PROBLEMS] + ([f"and {extra} more"] if extra > 0 else [])


def _validator(schema: Mapping[str, Any]) -> Draft202012Validator:
    """The schema's validator, built once per distinct schema (building one costs more than using it)."""
    key = json.dumps(schema, sort_keys=True, default=str)
    return _validators.get_or_make(key, lambda: Draft202012Validator(schema))


_validators: Recent[str, Draft202012Validator] = Recent(256)


def _describe_error(error: Any) -> str:
    """One jsonschema error as a short sentence naming the argument."""
    where = _path(error.absolute_path)
    if error.validator == "type":
        expected = error.validator_value
        kinds = " or ".join(expected) if isinstance(expected, list) else str(expected)
        got = json.dumps(error.instance, ensure_ascii=False, default=str)
        return f"argument '{where}' must be {kinds}, got {_shorten(got, 40)}"
    message = _shorten(str(error.message), 100)
    return f"argument '{where}': {message}" if where else f"arguments: {message}"


def _path(parts: Any) -> str:
    """A JSON path such as items[0].name."""
    text = ""
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def _shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
