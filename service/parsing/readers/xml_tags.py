"""XML-style tool tags, with HTML entities (&gt;, &amp;) in their text decoded.

    <tool>name</tool><tool_input>text or JSON</tool_input>     LangChain XML agent
    <final_answer>text</final_answer>
    <function=name><parameter=key>value</parameter></function>  OpenHands / Qwen3-Coder
    <invoke name="name"><parameter name="key">value</parameter></invoke>  Claude's text form

A closing tag the stop sequence cut off is taken to be at the end of the reply.
"""

import html
import re
from collections.abc import Mapping
from typing import Any

from reactstep.service.parsing.readers.reading import Reading
from reactstep.service.parsing.steps import Step, in_spans, value_step
from reactstep.service.parsing.text_parts import complaint_at
from reactstep.service.parsing.tool_args import ToolInput, input_value_noted

# Where a call in these formats begins, anywhere in a line, with MiniMax-M2's and Seed-OSS's wrappers
# around them (the streamed thought ends there).
STARTS = ("<minimax:tool_call>", "<seed:tool_call>", "<function=", "<invoke ")

_OPEN = re.compile(
    r"<(?:(?P<tool>tool)>|(?P<final>final_answer)>|function=(?P<function>[\w.-]+)>"
    r"|invoke\s+name=\"(?P<invoke>[\w.-]+)\"\s*>)",
    re.IGNORECASE,
)
_TOOL_NAME = re.compile(r"\s*([\w.-]+)\s*</tool>\s*", re.IGNORECASE)
_INPUT_OPEN = re.compile(r"<tool_input>", re.IGNORECASE)
_PARAMETER = re.compile(r"<parameter(?:=(?P<eq>[\w.-]+)|\s+name=\"(?P<attr>[\w.-]+)\")\s*>", re.IGNORECASE)


def read(body: str, taken: list[Step], tools: Mapping[str, Any]) -> Reading:
    """The steps the tags write, outside the steps already taken."""
    steps: list[Step] = []
    pos = 0
    for match in _OPEN.finditer(body):
        if match.start() < pos or in_spans(match.start(), taken):
            continue
        with complaint_at(body, match.start()):
            step = _step(body, match, tools)
        if step is not None:
            steps.append(step)
            pos = step.end
    return Reading(steps)


def _step(body: str, match: re.Match[str], tools: Mapping[str, Any]) -> Step | None:
    start = match.start()
    if match["final"]:
        text, end = _until(body, match.end(), "</final_answer>")
        return Step(start, end, body[start:end].strip(), final=html.unescape(text).strip())
    if match["tool"]:
        return _tool_tags(body, match, tools)
    name = match["function"] or match["invoke"]
    closing = "</function>" if match["function"] else "</invoke>"
    inner, end = _until(body, match.end(), closing)
    args = _parameters(inner)
    return Step(start, end, body[start:end].strip(), name, ToolInput(keywords=args), native=True)


def _tool_tags(body: str, match: re.Match[str], tools: Mapping[str, Any]) -> Step | None:
    """<tool>name</tool> and the optional <tool_input> after it."""
    name = _TOOL_NAME.match(body, match.end())
    if name is None:
        return None
    end, value = name.end(), None
    notes: tuple[str, ...] = ()
    opened = _INPUT_OPEN.match(body, end)
    if opened:
        text, end = _until(body, opened.end(), "</tool_input>")
        value, notes = input_value_noted(html.unescape(text).strip())
    return value_step(name[1], value, (match.start(), end), body[match.start() : end].strip(), tools, notes)


def _until(body: str, pos: int, closing: str) -> tuple[str, int]:
    """The text from pos to the closing tag, and where the tag ends (the reply's end when absent)."""
    close = re.compile(re.escape(closing), re.IGNORECASE).search(body, pos)
    if close is None:
        return body[pos:], len(body)
    return body[pos : close.start()], close.end()


def _parameters(inner: str) -> dict[str, str]:
    """The <parameter> values, each up to its closing tag (one pass: unclosed tags end the scan)."""
    args, pos = {}, 0
    while (opened := _PARAMETER.search(inner, pos)) is not None:
        close = inner.find("</parameter>", opened.end())
        if close < 0:
            break
        args[opened["eq"] or opened["attr"]] = _parameter_value(inner[opened.end() : close])
        pos = close + len("</parameter>")
    return args


def _parameter_value(text: str) -> str:
    """A parameter's text: entities decoded, the line breaks that frame it dropped."""
    return html.unescape(text.removeprefix("\n").removesuffix("\n"))
