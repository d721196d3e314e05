"""The shapes a JSON action takes: which key names the tool and which holds its input.

{"action", "action_input"}  LangChain JSON agents          {"name", "arguments"}  OpenAI
{"tool", "tool_input"|"params"|...}  CrewAI, Llama agents   {"name", "parameters"} Llama 3
{"tool_name", "tool_input"|...}   {"function", "parameters"|"arguments"}   {"name", "input"} Anthropic
{"type": "function", "function": {...}}  an OpenAI tool call written out as text
{"name": tool} alone, for a known tool with no arguments
"""

import re
from collections.abc import Mapping
from typing import Any

from reactstep.service.parsing.steps import FINAL_NAME, Step, value_step
from reactstep.service.parsing.tool_args import arguments_value_noted

NAME_KEYS = ("action", "name", "tool", "tool_name", "function")
INPUT_KEYS = ("action_input", "arguments", "parameters", "params", "tool_input", "input", "args")
_TEXT_KEYS = ("action_input", "tool_input")  # inputs that are plain text by design
# Where a JSON object may start an action: its first key is one of the above.
BLOB_START = re.compile(r"""\{\s*(["'])(?:""" + "|".join(NAME_KEYS + INPUT_KEYS + ("type",)) + r")\1\s*:")


def blob_step(
    value: Any, span: tuple[int, int], raw: str, tools: Mapping[str, Any], notes: tuple[str, ...] = ()
) -> Step | None:
    """The step a decoded JSON object describes, or None when it is not an action at all."""
    if not isinstance(value, dict):
        return None
    inner = value.get("function")
    if isinstance(inner, dict) and value.get("type", "function") == "function":
        value = inner
    for name_key in NAME_KEYS:
        name = value.get(name_key)
        if not isinstance(name, str):
            continue
        for input_key in INPUT_KEYS:
            if input_key in value:
                payload, repaired = arguments_value_noted(value[input_key])
                notes += repaired
                if isinstance(payload, str) and input_key not in _TEXT_KEYS:
                    notes += (f'"{input_key}" held text, not an object; it is the tool\'s one input.',)
                return value_step(name, payload, span, raw, tools, notes)
        if set(value) == {name_key} and (name in tools or FINAL_NAME.fullmatch(name.strip())):
            return value_step(name, None, span, raw, tools, notes)
    return None
