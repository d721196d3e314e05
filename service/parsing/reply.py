"""Turn a model's raw ReAct reply into one step: a tool call or a final answer.

    text ─► size limit ─► cut at the first hallucinated "Observation:" line
         ─► labels in order: "Action:" (call | bare name + "Action Input:" | JSON), "Final Answer:"
         ─► JSON action blobs (fenced or bare) outside the spans found so far
         ─► exactly one action xor one final answer, else FormatError
         ─► action: bind its input to the tool's schema (tool_args.py) ─► ParsedReply

The reply is untrusted input: nothing in it is evaluated (see call_syntax.py).
"""

import json
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from reactstep.service.parsing.call_syntax import (
    TOOL_NAME,
    CallSyntaxError,
    is_call_start,
    parse_call,
    render_action,
)
from reactstep.service.parsing.tool_args import (
    STRICT_JSON,
    ArgumentError,
    ToolInput,
    arguments_value,
    input_value,
    tool_input,
)

__all__ = ["FormatError", "ParsedAction", "ParsedReply", "parse_reply", "render_action"]

MAX_REPLY_CHARS = 200_000
_MAX_BAD_BLOBS = 20

# Possessive "*+" runs keep a line of spaces from making the label patterns quadratic.
_SP = r"[ \t]*+"
_BOLD = r"(?:\*\*|__)?"
_LABEL_WORDS = (
    r"(?P<final>final[ \t_]*+answer|answer)|(?P<input>action[ \t_]*+input)|(?P<action>action)|thought"
)
_LABEL = re.compile(
    rf"^{_SP}`?{_BOLD}{_SP}(?:{_LABEL_WORDS}){_SP}{_BOLD}{_SP}:(?:{_SP}(?:\*\*|__))?",
    re.IGNORECASE | re.MULTILINE,
)
_OBSERVATION = re.compile(rf"^{_SP}`?{_BOLD}{_SP}observation{_SP}{_BOLD}{_SP}:", re.I | re.M)
_THOUGHT_LABEL = re.compile(rf"`?{_BOLD}{_SP}thought{_SP}{_BOLD}{_SP}:{_SP}{_BOLD}", re.I)
# What may sit between "Action:" and the call: a line break, a ``` fence opener, backticks.
_DECORATION = re.compile(rf"{_SP}(?:\n{_SP})?(?:```[\w+-]*+{_SP}\n{_SP})?`*+{_SP}")
_LINE_END = re.compile(r"[ \t`*]*(?:\n|\Z)")
_GAP = re.compile(r"[\s`]*")
_BACKTICKS = re.compile(r"`*")
_CHAINED = re.compile(r"\.[A-Za-z_]|[(\[]")
_BLOB_START = re.compile(r'\{\s*"(?:action|action_input|name|arguments)"\s*:')
_FINAL_NAME = re.compile(r"final[ \t_]*answer", re.IGNORECASE)
_NOTHING_FOUND = (
    'Reply with `Action: tool_name(arg="value")` to call a tool, or `Final Answer: ...` when you are done.'
)


@dataclass(frozen=True)
class ParsedAction:
    """One tool call the model asked for."""

    tool_name: str
    tool_args: dict[str, Any]
    raw_action_string: str


@dataclass(frozen=True)
class ParsedReply:
    """A parsed reply: the thought plus exactly one of action / final_answer."""

    thought: str
    action: ParsedAction | None
    final_answer: str | None


class FormatError(Exception):
    """The reply could not be parsed; str(exc) says what was wrong, addressed to the model."""

    def __init__(self, reason: str, thought: str = "") -> None:
        super().__init__(reason)
        self.reason = reason
        self.thought = thought


@dataclass(frozen=True)
class _Step:
    """An action or final answer found in the reply, not yet checked against the tool schema."""

    start: int
    end: int
    raw: str = ""
    tool: str = ""
    given: ToolInput = field(default_factory=ToolInput)
    final: str | None = None


def parse_reply(text: str, tools: Mapping[str, dict[str, Any]]) -> ParsedReply:
    """Parse one model reply into its thought and exactly one action or final answer."""
    if len(text) > MAX_REPLY_CHARS:
        raise FormatError(
            f"Your reply is {len(text)} characters long; the limit is {MAX_REPLY_CHARS}. "
            "Reply with a short Thought and one Action."
        )
    # Text after a made-up "Observation:" is dropped: the model must wait for the real one.
    observation = _OBSERVATION.search(text)
    body = text if observation is None else text[: observation.start()]
    try:
        steps = _labelled_steps(body, tools)
        blobs, bad_json = _blob_steps(body, steps, tools)
        step, thought = _choose(body, steps + blobs, bad_json)
        if step.final is not None:
            return ParsedReply(thought, None, step.final)
        return ParsedReply(thought, _build_action(step, tools, thought), None)
    except (RecursionError, MemoryError, ValueError):
        # Hostile input can exhaust the parsers; that is the model's format problem, not a crash.
        raise FormatError(
            "Your reply is too deeply nested or malformed to parse. " + _NOTHING_FOUND
        ) from None


def _labelled_steps(body: str, tools: Mapping[str, Any]) -> list[_Step]:
    """The actions and the final answer the labels introduce; text inside a step is its content."""
    steps: list[_Step] = []
    pos, final_label_seen = 0, False
    for label in _LABEL.finditer(body):
        if label.start() < pos:
            continue
        if label["action"]:
            start = label.end() - len(label.group().lstrip())
            with _complaint_at(body, start):
                steps.append(_locate_action(body, start, label.end(), tools))
            pos = steps[-1].end
        elif label["final"] and not final_label_seen:
            final_label_seen = True
            steps.append(_Step(label.start(), len(body), final=body[label.end() :].strip()))
    return steps


def _blob_steps(body: str, taken: list[_Step], tools: Mapping[str, Any]) -> tuple[list[_Step], str]:
    """JSON action blobs outside the steps already taken, and why the first bad one did not decode."""
    # Spans are disjoint and sorted, except that a final answer's span runs to the end.
    spans = sorted((step.start, step.end) for step in taken)
    steps: list[_Step] = []
    bad_json, pos, span, failures = "", 0, 0, 0
    for match in _BLOB_START.finditer(body):
        start = match.start()
        while span < len(spans) and spans[span][1] <= start:
            span += 1
        if start < pos or (span < len(spans) and spans[span][0] <= start):
            continue
        try:
            value, pos = STRICT_JSON.raw_decode(body, start)
        except (ValueError, RecursionError) as exc:
            bad_json = bad_json or str(exc)
            failures += 1
            # Each failed decode may rescan the rest of the reply; hostile input repeats them.
            if failures >= _MAX_BAD_BLOBS:
                break
            continue
        with _complaint_at(body, start):
            step = _blob_step(value, start, pos, body[start:pos], tools)
        if step is not None:
            steps.append(step)
    return steps, bad_json


def _skip(pattern: re.Pattern[str], text: str, pos: int) -> int:
    """Where an always-matching (possibly empty) pattern ends when matched at pos."""
    match = pattern.match(text, pos)
    return pos if match is None else match.end()


@contextmanager
def _complaint_at(body: str, start: int) -> Iterator[None]:
    """Give a locator's complaint, as a FormatError, the thought before the step at start."""
    try:
        yield
    except (FormatError, CallSyntaxError, ArgumentError) as exc:
        raise FormatError(str(exc), _thought(body[:start])) from None


def _locate_action(body: str, start: int, label_end: int, tools: Mapping[str, Any]) -> _Step:
    """The step introduced by an "Action:" label at start."""
    pos = _skip(_DECORATION, body, label_end)
    if body.startswith("{", pos):
        try:
            value, end = STRICT_JSON.raw_decode(body, pos)
        except (ValueError, RecursionError) as exc:
            raise FormatError(f"The JSON after Action: is not valid JSON ({exc}).") from None
        # The raw text is the JSON alone, but the thought ends at the label.
        step = _blob_step(value, start, end, body[pos:end], tools)
        if step is None:
            raise FormatError('A JSON action needs "action" and "action_input" keys.')
        return step
    if is_call_start(body, pos):
        call = parse_call(body, pos)
        if _CHAINED.match(body, call.end):
            raise FormatError('An Action must be one tool call such as tool_name(arg="value").')
        end = _skip(_BACKTICKS, body, call.end)
        raw = body[start:end].strip()
        return _Step(start, end, raw, call.name, ToolInput(call.positional, call.keywords))
    return _named_action(body, start, pos, tools)


def _named_action(body: str, start: int, pos: int, tools: Mapping[str, Any]) -> _Step:
    """LangChain style: "Action: name" alone on its line, then an optional "Action Input:"."""
    name = _FINAL_NAME.match(body, pos) or TOOL_NAME.match(body, pos)
    if name is None or not _LINE_END.match(body, name.end()):
        raise FormatError('After "Action:" write one tool call, e.g. Action: tool_name(arg="value").')
    end, value = name.end(), None
    label = _LABEL.search(body, end)
    if label is not None and label["input"] and _GAP.fullmatch(body, end, label.start()):
        following = _LABEL.search(body, label.end())
        end = len(body) if following is None else following.start()
        value = input_value(_unfence(body[label.end() : end]))
    return _value_step(name.group(), value, start, end, body[start:end].strip(), tools)


def _unfence(text: str) -> str:
    """Drop a ``` fence or single backticks wrapped around an input."""
    text = text.strip()
    if text.startswith("```"):
        text = text.partition("\n")[2].rstrip().removesuffix("```")
    elif len(text) >= 2 and text[0] == text[-1] == "`":
        text = text[1:-1]
    return text.strip()


def _blob_step(value: Any, start: int, end: int, raw: str, tools: Mapping[str, Any]) -> _Step | None:
    """The step a decoded JSON blob describes, or None when it is not an action at all."""
    if not isinstance(value, dict):
        return None
    if isinstance(value.get("action"), str) and "action_input" in value:
        name, payload = value["action"], value["action_input"]
    elif isinstance(value.get("name"), str) and "arguments" in value:
        name, payload = value["name"], arguments_value(value["arguments"])
    else:
        return None
    return _value_step(name, payload, start, end, raw, tools)


def _value_step(name: str, value: Any, start: int, end: int, raw: str, tools: Mapping[str, Any]) -> _Step:
    """A step from a tool name and its input value (object, text or nothing)."""
    if name not in tools and _FINAL_NAME.fullmatch(name.strip()):
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        return _Step(start, end, raw, final="" if value is None else text.strip())
    return _Step(start, end, raw, name, tool_input(name, value))


def _choose(body: str, steps: list[_Step], bad_json: str) -> tuple[_Step, str]:
    """The one step the reply makes, with the thought before it; ambiguity is an error."""
    if not steps:
        hint = f" A JSON action was found but is not valid ({bad_json})." if bad_json else ""
        raise FormatError(f"No action or final answer found.{hint} {_NOTHING_FOUND}", _thought(body))
    first = min(steps, key=lambda step: step.start)
    thought = _thought(body[: first.start])
    actions = sum(step.final is None for step in steps)
    if actions > 1:
        problem = (
            f"Your reply contains {actions} actions; "
            "send exactly one Action per reply and wait for its Observation."
        )
    elif len(steps) > 1 and actions:
        problem = "Your reply contains both an Action and a Final Answer; send only one of them."
    elif len(steps) > 1:
        problem = "Your reply contains more than one Final Answer; give one."
    elif first.final == "":
        problem = "Your Final Answer is empty; write the answer after the label."
    else:
        return first, thought
    raise FormatError(problem, thought)


def _thought(before: str) -> str:
    """The reasoning text before a step, without its "Thought:" label or a fence opener."""
    text = before.rstrip()
    last_line = text[text.rfind("\n") + 1 :]
    # Only an unclosed fence or backtick opened the step; a closed one belongs to the thought.
    if last_line.lstrip().startswith("```") and text.count("```") % 2 == 1:
        text = text[: len(text) - len(last_line)]
    elif text.endswith("`") and text.count("`") % 2 == 1:
        text = text[:-1]
    text = text.strip()
    label = _THOUGHT_LABEL.match(text)
    return (text if label is None else text[label.end() :]).strip()


def _build_action(step: _Step, tools: Mapping[str, dict[str, Any]], thought: str) -> ParsedAction:
    """Bind the step's arguments to its tool's schema."""
    schema = tools.get(step.tool)
    if schema is None:
        available = ", ".join(sorted(tools)) or "none"
        raise FormatError(f"Unknown tool '{step.tool}'. Available tools: {available}.", thought)
    try:
        args = step.given.bind(schema)
    except ArgumentError as exc:
        raise FormatError(f"{step.tool}: {exc}", thought) from None
    return ParsedAction(step.tool, args, step.raw)
