"""A corrected example of a call, for the format_error message about that tool."""

from collections.abc import Mapping
from typing import Any

from reactstep.service.parsing.call_syntax import render_action

_PLACEHOLDERS: dict[str, Any] = {
    "string": "...",
    "integer": 1,
    "number": 1.0,
    "boolean": True,
    "array": [],
    "object": {},
}


def example_action(tool: str, schema: Mapping[str, Any]) -> str:
    """Action: tool(required=<placeholder>, ...), the required arguments with values of their types."""
    properties = schema.get("properties", {})
    required = [name for name in schema.get("required", []) if name in properties]
    args = {name: _placeholder(properties[name]) for name in required}
    try:
        return render_action(tool, args)
    except (ValueError, TypeError):  # a name that is not a Python identifier
        return f'{{"name": "{tool}", "arguments": {{...}}}}'


def _placeholder(spec: Any) -> Any:
    kinds = spec.get("type") if isinstance(spec, Mapping) else None
    if isinstance(kinds, list):
        kinds = next((kind for kind in kinds if kind != "null"), None)
    if kinds is None and isinstance(spec, Mapping):
        options = [o.get("type") for o in spec.get("anyOf", []) if isinstance(o, Mapping)]
        kinds = next((kind for kind in options if kind and kind != "null"), None)
    return _PLACEHOLDERS.get(str(kinds), "...")
