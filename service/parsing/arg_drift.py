"""Argument names and types that drifted from the tool's schema, mapped back when that is unambiguous.

    names: declared alias (ToolSpec.aliases: path -> file_path) ─► same name up to case, "_" and "-"
    types: "5" for an integer, "2.5" for a number, "true"/"false" for a boolean, 5 for a string

Each mapping returns a note; anything else is left for the schema check to refuse.
"""

import re
from collections.abc import Mapping
from typing import Any

Aliases = Mapping[str, str]  # a name models write -> the parameter it means

_INTEGER = re.compile(r"[+-]?\d{1,18}")
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_BOOLEANS = {"true": True, "false": False}


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
