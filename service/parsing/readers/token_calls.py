# ruff: noqa: RUF001, RUF002  (DeepSeek's tokens are written with fullwidth bars, as the model writes them)
"""Tool calls framed by a model's special tokens, one call between each begin and end token.

    DeepSeek V3, R1   <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>name
                      ```json {..} ```<｜tool▁call▁end｜>...<｜tool▁calls▁end｜>
    DeepSeek V3.1     <｜tool▁call▁begin｜>name<｜tool▁sep｜>{..}<｜tool▁call▁end｜>
                      (R1 may write <｜tool▁calls｜> in place of both begin tokens)
    Kimi K2           <|tool_calls_section_begin|><|tool_call_begin|>functions.name:0
                      <|tool_call_argument_begin|>{..}<|tool_call_end|>...<|tool_calls_section_end|>
    GLM-4.5 / 4.6     <tool_call>name<arg_key>k</arg_key><arg_value>v</arg_value>...</tool_call>
                      (GLM-4: <tool_call>name\\n{..}</tool_call>)

Each call is a step of its own (reply.py proposes the first and names the rest). A call whose end
token is missing is refused, naming it: the model was cut off and its arguments may be incomplete.
"""

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from reactstep.service.parsing.lenient_json import decode_at
from reactstep.service.parsing.readers.call_blocks import skip_end_tokens
from reactstep.service.parsing.readers.reading import Reading
from reactstep.service.parsing.steps import FormatError, Step, in_spans, value_step
from reactstep.service.parsing.text_parts import complaint_at

# Where a call in these formats begins, anywhere in a line (the streamed thought ends there); GLM's
# <tool_call> is call_blocks'.
STARTS = (
    "<｜tool▁calls▁begin｜>",
    "<｜tool▁call▁begin｜>",
    "<｜tool▁calls｜>",
    "<|tool_calls_section_begin|>",
    "<|tool_call_begin|>",
)


@dataclass(frozen=True)
class _Frame:
    begin: str
    end: str
    head: re.Pattern[str]  # the call's name (group "name") up to where its arguments start


_DEEPSEEK_HEAD = re.compile(
    r"\s*(?:function\s*<｜tool▁sep｜>\s*(?P<name>[\w.-]+)\s*(?:```(?:json)?)?"
    r"|(?P<name2>[\w.-]+)\s*<｜tool▁sep｜>)\s*"
)
_FRAMES = (
    _Frame("<｜tool▁call▁begin｜>", "<｜tool▁call▁end｜>", _DEEPSEEK_HEAD),
    _Frame("<｜tool▁calls｜>", "<｜tool▁call▁end｜>", _DEEPSEEK_HEAD),  # an R1 variant: no call token
    _Frame(
        "<|tool_call_begin|>",
        "<|tool_call_end|>",
        re.compile(r"\s*(?:functions\.)?(?P<name>[\w.-]+?)(?::\d+)?\s*<\|tool_call_argument_begin\|>\s*"),
    ),
    _Frame(
        "<tool_call>", "</tool_call>", re.compile(r"\s*(?P<name>[\w.-]+)\s*(?=<arg_key>|\{|\Z|</tool_call>)")
    ),
)
_BEGIN = re.compile("|".join(re.escape(frame.begin) for frame in _FRAMES))
_PAIR = re.compile(r"\s*<arg_key>(.*?)</arg_key>\s*<arg_value>", re.DOTALL)
_SECTION_ENDS = re.compile(r"\s*(?:<｜tool▁calls▁end｜>|<\|tool_calls_section_end\|>)")


def read(body: str, taken: list[Step], tools: Mapping[str, Any]) -> Reading:
    """Every framed call, outside the steps already taken."""
    steps: list[Step] = []
    pos = 0
    for match in _BEGIN.finditer(body):
        if match.start() < pos or in_spans(match.start(), taken):
            continue
        frame = next(frame for frame in _FRAMES if frame.begin == match.group())
        head = frame.head.match(body, match.end())
        if head is None:
            continue  # not this format's call (a Hermes <tool_call> holds JSON, read elsewhere)
        with complaint_at(body, match.start()):
            step = _call(body, match.start(), head, frame, tools)
        steps.append(step)
        pos = step.end
    return Reading(steps)


def _call(body: str, start: int, head: re.Match[str], frame: _Frame, tools: Mapping[str, Any]) -> Step:
    name = head["name"] or head.groupdict().get("name2") or ""
    close = body.find(frame.end, head.end())
    if close < 0:
        rest = body[head.end() :].strip()
        if rest.startswith("<arg_key>"):
            _arg_pairs(rest, name, cut_off=True)  # names the value left open, if one is
        raise FormatError(
            f"The call of {name} is cut off: {frame.end} is missing, so its arguments may be incomplete. "
            "Send the whole call again."
        )
    inner = body[head.end() : close].strip()
    value: Any = _arg_pairs(inner, name) if inner.startswith("<arg_key>") else _arguments(inner, name)
    end = skip_end_tokens(body, close + len(frame.end))
    section = _SECTION_ENDS.match(body, end)
    end = section.end() if section else end
    step = value_step(name, value, (start, end), body[start:end].strip(), tools)
    return Step(step.start, step.end, step.raw, step.tool, step.given, step.final, step.notes, native=True)


def _arguments(inner: str, name: str) -> Any:
    """The JSON arguments of a call (DeepSeek may fence them in ```json)."""
    text = inner.removeprefix("```json").removeprefix("```").removesuffix("```").strip()
    if not text:
        return None
    try:
        value, _end, _note = decode_at(text, 0)
    except ValueError as exc:
        raise FormatError(f"The arguments of {name} are not valid JSON ({exc}).") from None
    return value


def _arg_pairs(inner: str, name: str, cut_off: bool = False) -> dict[str, Any]:
    """GLM's <arg_key>/<arg_value> pairs; a value that is JSON (a number, list, object) is decoded.

    `cut_off`: the call has no end tag, so only an unclosed value is worth naming."""
    args: dict[str, Any] = {}
    pos = 0
    while (pair := _PAIR.match(inner, pos)) is not None:
        close = inner.find("</arg_value>", pair.end())
        if close < 0:
            raise FormatError(f"The call of {name} is cut off: </arg_value> is missing after {pair[1]!r}.")
        args[pair[1].strip()] = _glm_value(inner[pair.end() : close])
        pos = close + len("</arg_value>")
    if inner[pos:].strip() and not cut_off:
        raise FormatError(f"The call of {name} has text outside its <arg_key>/<arg_value> pairs.")
    return args


def _glm_value(text: str) -> Any:
    """GLM writes strings as they are and other values as JSON."""
    if text[:1] in "[{":
        try:
            return json.loads(text)
        except ValueError:
            return text
    return text
