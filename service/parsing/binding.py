"""A tool call bound to its tool's schema: the action a step proposes, its arguments valid for the tool.

    bind_action(step, tools, aliases, thought)
        tool name: itself, or the one tool spelled the same up to case, "-" and "_" (noted)
        ─► bind_arguments: a lone value (text, number, list) to the only, else the first required,
           parameter ─► positional ones in property order ─► nesting limit ─► names and types
           that drifted, mapped back when that is unambiguous (each noted):
               names: declared alias (ToolSpec.aliases: path -> file_path) ─► same name up to
                      case, "_" and "-"
               types: "5" for an integer, "2.5" for a number, "true"/"false" for a boolean, 5 for
                      a string
           ─► jsonschema (a validator built once per distinct schema)
        ─► refused: a FormatError naming what is wrong and a corrected example of the call
        ─► a native call's raw action string, written in the call syntax (call_syntax.render_action)

Every complaint is addressed to the model: bind_arguments gives clauses (ArgumentError) that
bind_action prefixes with the tool's name.
"""

import json
import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from jsonschema import Draft202012Validator  # type: ignore[import-untyped]

from reactstep.service.parsing.call_syntax import MAX_NESTING, example_action, render_action
from reactstep.service.parsing.steps import FormatError, ParsedAction, Step
from reactstep.service.parsing.tool_args import ArgumentError, ToolInput, shorten

Aliases = Mapping[str, str]  # a name models write -> the parameter it means

_MAX_PROBLEMS = 4
_INTEGER = re.compile(r"[+-]?\d{1,18}")
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_BOOLEANS = {"true": True, "false": False}


def bind_action(
    step: Step,
    tools: Mapping[str, Mapping[str, Any]],
    aliases: Mapping[str, Aliases],
    thought: str,
    blob: str = "",
) -> tuple[ParsedAction, tuple[str, ...]]:
    """The step's call bound to its tool's schema, with a note for each name or type mapped, or a
    FormatError (with `thought`); a native call's JSON (`blob`) is written in the call syntax."""
    name, notes = _tool_name(step.tool, tools)
    if name is None:
        available = ", ".join(sorted(tools)) or "none"
        raise FormatError(f"Unknown tool '{step.tool}'. Available tools: {available}.", thought)
    schema = tools[name]
    try:
        args, bound = bind_arguments(step.given, schema, aliases.get(name, {}))
    except ArgumentError as exc:
        raise FormatError(f"{name}: {exc}. Write it like: {example_action(name, schema)}", thought) from None
    raw = step.raw
    if blob:
        try:
            raw = render_action(name, args)
        except (ValueError, TypeError):  # an argument name that is not a Python identifier
            raw = f"Action: {blob}"
    return ParsedAction(name, args, raw), (*notes, *bound)


def _tool_name(name: str, tools: Mapping[str, Any]) -> tuple[str | None, tuple[str, ...]]:
    """The tool a name means: itself, or the one tool spelled the same up to case, "-" and "_"."""
    if name in tools:
        return name, ()
    key = name.lower().replace("-", "_")
    matches = [tool for tool in tools if tool.lower().replace("-", "_") == key]
    if len(matches) == 1:
        return matches[0], (f"Tool '{name}' was read as '{matches[0]}'.",)
    return None, ()


def bind_arguments(
    given: ToolInput, schema: Mapping[str, Any], aliases: Aliases | None = None
) -> tuple[dict[str, Any], list[str]]:
    """The arguments by name, valid for the schema, and a note for each repair it took; plain text
    fills one parameter."""
    notes = list(given.notes)
    if given.text is not None:
        name = _text_parameter(schema)
        args = {name: given.text}
        if not isinstance(given.text, str):
            notes.append(f"The input {shorten(json.dumps(given.text), 40)} was given to '{name}'.")
    else:
        args = _by_name(schema, given.positional, given.keywords)
    if _too_deep(args):
        raise ArgumentError(f"arguments are nested more than {MAX_NESTING} levels deep")
    args, drift = fix_drift(args, schema, aliases or {})
    problems = _problems(args, schema)
    if problems:
        raise ArgumentError("; ".join(problems))
    return args, notes + drift


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


# Names and types that drifted


def fix_drift(
    args: dict[str, Any], schema: Mapping[str, Any], aliases: Aliases
) -> tuple[dict[str, Any], list[str]]:
    """The arguments with drifted names and types mapped to the schema's, and a note for each."""
    properties = schema.get("properties", {})
    if not isinstance(properties, Mapping):
        return args, []
    fixed: dict[str, Any] = {}
    notes: list[str] = []
    for name, value in args.items():
        target = name if name in properties else _parameter_for(name, properties, aliases)
        if target is None or target in args or target in fixed:
            fixed[name] = value
            continue
        fixed[target] = value
        notes.append(f"Argument '{name}' was read as '{target}'.")
    for name, value in list(fixed.items()):
        spec = properties.get(name)
        coerced = _coerced(value, _types(spec)) if isinstance(spec, Mapping) else None
        if coerced is not None:
            fixed[name] = coerced[0]
            notes.append(f"Argument '{name}' was given as {coerced[1]}; read as {coerced[0]!r}.")
    return fixed, notes


def _parameter_for(name: str, properties: Mapping[str, Any], aliases: Aliases) -> str | None:
    """The parameter an unknown name stands for: a declared alias, else one spelling-equal name."""
    if aliases.get(name) in properties:
        return aliases[name]
    key = _spelling(name)
    matches = [parameter for parameter in properties if _spelling(parameter) == key]
    return matches[0] if len(matches) == 1 else None


def _spelling(name: str) -> str:
    return name.lower().replace("_", "").replace("-", "")


def _types(spec: Mapping[str, Any]) -> set[str]:
    """The JSON types a property allows, looking into anyOf (how optional fields are written)."""
    kinds = spec.get("type")
    types = set(kinds) if isinstance(kinds, list) else {kinds} if isinstance(kinds, str) else set()
    for option in spec.get("anyOf", []):
        if isinstance(option, Mapping) and isinstance(option.get("type"), str):
            types.add(option["type"])
    return types


def _coerced(value: Any, types: set[str]) -> tuple[Any, str] | None:
    """The value in the property's type and how it was given, when it is plainly that value."""
    if not types or _fits(value, types):
        return None
    if isinstance(value, str):
        text = value.strip()
        if "integer" in types and _INTEGER.fullmatch(text):
            return int(text), f"the string {value!r}"
        if "number" in types and _NUMBER.fullmatch(text):
            return float(text), f"the string {value!r}"
        if "boolean" in types and text.lower() in _BOOLEANS:
            return _BOOLEANS[text.lower()], f"the string {value!r}"
    if "string" in types and isinstance(value, int | float) and not isinstance(value, bool):
        return str(value), f"the number {value!r}"
    return None


def _fits(value: Any, types: set[str]) -> bool:
    if isinstance(value, bool):
        return "boolean" in types
    checks = {
        "boolean": False,  # a bool returned above
        "string": isinstance(value, str),
        "integer": isinstance(value, int),
        "number": isinstance(value, int | float),
        "array": isinstance(value, list),
        "object": isinstance(value, dict),
        "null": value is None,
    }
    return any(checks.get(kind, True) for kind in types)


# What the schema refuses


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
    return _validator_for(json.dumps(schema, sort_keys=True, default=str))


@lru_cache(maxsize=256)
def _validator_for(key: str) -> Draft202012Validator:
    return Draft202012Validator(json.loads(key))


def _describe_error(error: Any) -> str:
    """One jsonschema error as a short sentence naming the argument."""
    where = _path(error.absolute_path)
    if error.validator == "type":
        expected = error.validator_value
        kinds = " or ".join(expected) if isinstance(expected, list) else str(expected)
        got = json.dumps(error.instance, ensure_ascii=False, default=str)
        return f"argument '{where}' must be {kinds}, got {shorten(got, 40)}"
    message = shorten(str(error.message), 100)
    return f"argument '{where}': {message}" if where else f"arguments: {message}"


def _path(parts: Any) -> str:
    """A JSON path such as items[0].name."""
    text = ""
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text
