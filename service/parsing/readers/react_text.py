"""Text ReAct: "Action: tool(args)" | "Action: name" + "Action Input: ..." | "Action: {json}",
and "Final Answer: ..." (also "Answer:", bold or backticked labels).

A final answer runs to the end of the reply, except that an "Action:" after it is the model
rambling on after it had finished: that text is dropped, with a note.
"""

import re
from collections.abc import Mapping
from typing import Any

from reactstep.service.parsing.call_syntax import TOOL_NAME, is_call_start, parse_call
from reactstep.service.parsing.lenient_json import decode_at
from reactstep.service.parsing.readers.reading import Reading
from reactstep.service.parsing.readers.shapes import blob_step
from reactstep.service.parsing.steps import FINAL_NAME, FormatError, Step, value_step
from reactstep.service.parsing.text_parts import complaint_at, skip
from reactstep.service.parsing.tool_args import ToolInput, input_value_noted

# Possessive "*+" runs keep a line of spaces from making the label patterns quadratic.
SP = r"[ \t]*+"
BOLD = r"(?:\*\*|__)?"
_LABEL_WORDS = (
    r"(?P<final>final[ \t_]*+answer|answer)|(?P<input>action[ \t_]*+input)|(?P<action>action)|thought"
)
LABEL = re.compile(
    rf"^{SP}`?{BOLD}{SP}(?:{_LABEL_WORDS}){SP}{BOLD}{SP}:(?:{SP}(?:\*\*|__))?",
    re.IGNORECASE | re.MULTILINE,
)
# What may sit between "Action:" and the call: a line break, a ``` fence opener (with or without
# a line break after its tag), backticks, bold markers.
_DECORATION = re.compile(
    rf"{SP}(?:\n{SP})?(?:```(?:[\w+-]*+{SP}\n\s*|(?:json)?\s*(?=\{{)))?[`*]*+{SP}", re.IGNORECASE
)
_LINE_END = re.compile(r"[ \t`*]*(?:\n|\Z)")
_GAP = re.compile(r"[\s`]*")
_BACKTICKS = re.compile(r"`*")
_CHAINED = re.compile(r"\.[A-Za-z_]|[(\[]")
_FENCE_OPEN = re.compile(r"```(?:[\w+-]*+[ \t]*+\n|(?:json)?(?=\s*[\[{]))", re.IGNORECASE)
# LlamaIndex drift: "Action: add (add two numbers)" with an "Action Input:" on the next line.
_INPUT_LABEL_AHEAD = rf"(?=[ \t`*]*\n\s*`?{BOLD}{SP}action[ \t_]*+input{SP}{BOLD}{SP}:)"
_DESCRIBED_NAME = re.compile(rf"({TOOL_NAME.pattern})[ \t]+(\([^()\n]*\)){_INPUT_LABEL_AHEAD}", re.IGNORECASE)
_DESCRIPTION = re.compile(r"\([^()\n]*\)")


def read(body: str, taken: list[Step], tools: Mapping[str, Any]) -> Reading:
    """The actions and the final answer the labels introduce; text inside a step is its content."""
    steps: list[Step] = []
    pos = 0
    for label in LABEL.finditer(body):
        if label.start() < pos:
            continue
        if label["action"]:
            start = label.end() - len(label.group().lstrip())
            with complaint_at(body, start):
                steps.append(_locate_action(body, start, label.end(), tools))
            pos = steps[-1].end
        elif label["final"]:
            steps.append(_final(body, label))
            break
    return Reading(steps)


def _final(body: str, label: re.Match[str]) -> Step:
    """The final answer after its label, up to an "Action:" label that follows it."""
    end = len(body)
    notes: tuple[str, ...] = ()
    for later in LABEL.finditer(body, label.end()):
        if later["action"]:
            end = later.start()
            notes = (
                "Text after the Final Answer that started an Action was dropped: the answer came first.",
            )
            break
    return Step(label.start(), len(body), final=body[label.end() : end].strip(), notes=notes)


def _locate_action(body: str, start: int, label_end: int, tools: Mapping[str, Any]) -> Step:
    """The step introduced by an "Action:" label at start."""
    pos = skip(_DECORATION, body, label_end)
    if body.startswith("{", pos):
        try:
            value, end, note = decode_at(body, pos)
        except ValueError as exc:
            raise FormatError(f"The JSON after Action: is not valid JSON ({exc}).") from None
        # The raw text is the JSON alone, but the thought ends at the label.
        notes = (note,) if note else ()
        step = blob_step(value, (start, end), body[pos:end].strip(), tools, notes)
        if step is None:
            raise FormatError('A JSON action needs "action" and "action_input" keys.')
        return step
    described = _DESCRIBED_NAME.match(body, pos)
    if described:
        note = f"The description after the tool name was dropped: {described[2]!r}."
        step = _named_action(body, start, described.start(2), tools, described[1])
        return Step(step.start, step.end, step.raw, step.tool, step.given, step.final, (note, *step.notes))
    if is_call_start(body, pos):
        call = parse_call(body, pos)
        if _CHAINED.match(body, call.end):
            raise FormatError('An Action must be one tool call such as tool_name(arg="value").')
        end = skip(_BACKTICKS, body, call.end)
        raw = body[start:end].strip()
        return Step(start, end, raw, call.name, ToolInput(call.positional, call.keywords))
    return _named_action(body, start, pos, tools)


def _named_action(
    body: str, start: int, pos: int, tools: Mapping[str, Any], described: str | None = None
) -> Step:
    """LangChain style: "Action: name" alone on its line, then an optional "Action Input:"."""
    name = (
        _DESCRIPTION.match(body, pos)
        if described
        else FINAL_NAME.match(body, pos) or TOOL_NAME.match(body, pos)
    )
    if name is None or not _LINE_END.match(body, name.end()):
        raise FormatError('After "Action:" write one tool call, e.g. Action: tool_name(arg="value").')
    tool = described or name.group()
    end, value = name.end(), None
    notes: tuple[str, ...] = ()
    label = LABEL.search(body, end)
    if label is not None and label["input"] and _GAP.fullmatch(body, end, label.start()):
        following = LABEL.search(body, label.end())
        end = len(body) if following is None else following.start()
        text, notes = _unwrap(body[label.end() : end])
        value, more = input_value_noted(text)
        notes += more
    return value_step(tool, value, (start, end), body[start:end].strip(), tools, notes)


def _unwrap(text: str) -> tuple[str, tuple[str, ...]]:
    """An input without the ``` fence, backticks or markdown emphasis wrapped around it."""
    text = text.strip()
    fence = _FENCE_OPEN.match(text)
    if fence:
        return text[fence.end() :].rstrip().removesuffix("```").strip(), ()
    if len(text) >= 2 and text[0] == text[-1] == "`":
        return text[1:-1].strip(), ()
    if text.endswith(("**", "__")) and text.count(text[-2:]) == 1:  # the label took the opening one
        return text[:-2].rstrip(), ("Markdown emphasis around the Action Input was dropped.",)
    marker = text[:2] if text.startswith(("**", "__")) else text[:1] if text.startswith("*") else ""
    if marker:
        inner = text[len(marker) :].removesuffix(marker).strip()
        return inner, ("Markdown emphasis around the Action Input was dropped.",)
    return text, ()
