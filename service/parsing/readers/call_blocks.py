# ruff: noqa: RUF001  (DeepSeek's tokens are written with fullwidth bars, as the model writes them)
"""JSON tool calls after a model's own marker: one object, an array of them, or one per line.

    <tool_call>{"name", "arguments"}</tool_call>          Hermes 2 Pro, Qwen2.5, Qwen3
    [TOOL_CALLS][{"name", "arguments"}, ...]              Mistral Nemo / Small (v3 to v7 tokenizers)
    [TOOL_CALLS]name[ARGS]{...} | name{...} | name[CALL_ID]id[ARGS]{...}   Mistral v11+, Magistral
    <|python_tag|>{"name", "parameters"}                 Llama 3.1 to 3.3
    <|tool_call|>[{"name", "arguments"}]                 Granite 3
    <|tool_call|>{"name", "arguments"}<|/tool_call|>     Phi-4-mini (llama.cpp's template)
    functools[{"name", "arguments"}]                     Phi-4-mini (its model card)
    <tool_calls>{..}\\n{..}</tool_calls> | [..]            MiniMax-M1 (lines), Jamba, Hunyuan (array)
    <|action_start|><|plugin|>{..}<|action_end|>         InternLM 2.5
    <|START_ACTION|>[{"tool_name", "parameters"}]<|END_ACTION|>   Command R7B
    [{"name", "arguments"}] | {"tool_calls": [..]} opening the reply   xLAM

Each call is a step of its own (reply.py proposes the first and names the rest). A block whose
closing marker is missing must still hold complete JSON; a cut-off block is refused, saying what is
missing, never read in half.
"""

import json
import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from reactstep.service.parsing.lenient_json import STRICT_JSON, decode_at
from reactstep.service.parsing.readers.reading import Reading
from reactstep.service.parsing.readers.shapes import NAME_KEYS, blob_step
from reactstep.service.parsing.steps import FormatError, Step, in_spans, value_step
from reactstep.service.parsing.text_parts import complaint_at

# Where a call in these formats begins, anywhere in a line (the streamed thought ends there).
STARTS = (
    "<tool_call>",
    "<tool_calls>",
    "[TOOL_CALLS]",
    "<|python_tag|>",
    "<|tool_call|>",
    "functools[",
    "<|action_start|>",
    "<|START_ACTION|>",
)

# marker -> the closing marker each call block needs ("" when the format has none)
_CLOSERS = {
    "<tool_call>": "</tool_call>",
    "[TOOL_CALLS]": "",
    "<|python_tag|>": "",
    "<|tool_call|>": "",
    "functools": "",
    "<tool_calls>": "</tool_calls>",
    "<|action_start|><|plugin|>": "<|action_end|>",
    "<|START_ACTION|>": "<|END_ACTION|>",
}
_KEY = "|".join(re.escape(f'"{key}"') for key in (*NAME_KEYS, "tool_calls"))
_MARKER = re.compile(
    r"(?P<marker><tool_call>|\[TOOL_CALLS\]|<\|python_tag\|>|<\|tool_call\|>|functools(?=\s*\[)|<tool_calls>"
    r"|<\|action_start\|>\s*<\|plugin\|>|<\|START_ACTION\|>)\s*(?=[\[{\"\w])"
    rf"|^[ \t]*(?P<bare>(?=\[\s*\{{\s*(?:{_KEY})\s*:|\{{\s*\"tool_calls\"\s*:\s*\[))",
    re.MULTILINE,
)
# Mistral v11: the name, an optional call id, an optional [ARGS], then the arguments object.
_NAMED = re.compile(r"([\w.-]+)(?:\[CALL_ID\][\w-]*)?(?:\[ARGS\])?\s*(?=\{)")
_END_TOKENS = re.compile(
    r"\s*(?:<\|/tool_call\|>|<\|eom_id\|>|<\|eot_id\|>|</s>|<\|im_end\|>|<｜end▁of▁sentence｜>)?"
)


def read(body: str, taken: list[Step], tools: Mapping[str, Any]) -> Reading:
    """Every call the markers introduce, outside the steps already taken."""
    steps: list[Step] = []
    pos = 0
    for match in _MARKER.finditer(body):
        if match.start() < pos or in_spans(match.start(), taken):
            continue
        with complaint_at(body, match.start()):
            found, pos = _block(body, match, tools)
        steps += found
    return Reading(steps)


def _block(body: str, match: re.Match[str], tools: Mapping[str, Any]) -> tuple[list[Step], int]:
    """The calls of the block at match, and where the block ends."""
    marker = re.sub(r"\s+", "", match["marker"] or "")
    closer = _CLOSERS.get(marker, "")
    start, pos = match.start(), match.end()
    named = _NAMED.match(body, pos) if marker == "[TOOL_CALLS]" else None
    if named:
        value, end = _json(body, named.end(), False, marker)
        single = value_step(named[1], value, (start, end), body[start:end].strip(), tools)
        return [replace(single, native=True)], end
    values, end = _values(body, pos, closer, marker)
    steps: list[Step] = []
    for index, value in enumerate(_calls(values)):
        span = (start, end) if index == 0 else (start + index, start + index + 1)
        step = blob_step(value, span, body[start:end].strip() if index == 0 else _shown(value), tools)
        if step is None:
            raise FormatError(
                f"The {marker or 'JSON'} block holds something that is not a call: {_shown(value)}"
            )
        steps.append(replace(step, native=True))
    if not steps:
        raise FormatError(f"The {marker or 'JSON'} block holds no call.")
    return steps, skip_end_tokens(body, end)


def _values(body: str, pos: int, closer: str, marker: str) -> tuple[list[Any], int]:
    """The JSON values from pos up to the closer (one per line allowed), and where the block ends."""
    close = body.find(closer, pos) if closer else -1
    if closer and close < 0:
        value, end = _json(body, pos, False, marker, closer)
        return [value], end
    limit = close if closer else len(body)
    values, at = [], pos
    while True:
        value, at = _json(body[:limit], at, close >= 0, marker)
        values.append(value)
        following = re.compile(r"\s*").match(body, at)
        at = following.end() if following else at
        if at >= limit or body[at] not in "[{":
            break
    return values, (close + len(closer) if closer else at)


def _json(body: str, pos: int, closed: bool, marker: str, closer: str = "") -> tuple[Any, int]:
    """The JSON value at pos: repaired when its block is closed, else it must be complete."""
    if closed:
        value, end, _note = decode_at(body, pos)
        return value, end
    try:
        return STRICT_JSON.raw_decode(body, pos)
    except ValueError:
        missing = f" and {closer} is missing" if closer else ""
        raise FormatError(
            f"The {marker or 'JSON'} call is cut off: its JSON is not complete{missing}. "
            "Send the whole call again."
        ) from None


def _calls(values: list[Any]) -> list[Any]:
    """The call objects: arrays flattened, {"tool_calls": [...]} opened."""
    calls: list[Any] = []
    for value in values:
        if isinstance(value, dict) and isinstance(value.get("tool_calls"), list):
            value = value["tool_calls"]
        calls += value if isinstance(value, list) else [value]
    return calls


def skip_end_tokens(body: str, pos: int) -> int:
    """Past the end-of-turn tokens a server may leave after a call."""
    match = _END_TOKENS.match(body, pos)
    return match.end() if match else pos


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 200 else text[:200] + "..."
