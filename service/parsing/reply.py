"""Turn a model's raw ReAct reply into one step: a tool call or a final answer.

    text ─► size limit ─► reasoning blocks (<think>..) out: they open the thought (reasoning.py)
         ─► an "Observation:" the reply opens with (an echo) left out
         ─► cut at the first "Observation:" line after an action (hallucinated: the model must wait)
         ─► format readers in their fixed order (readers/__init__.py), each outside the spans
            the earlier ones found
         ─► exactly one action xor one final answer, else FormatError; several calls in a
            model's own tool-call format: the first, the others named in a note (never run)
         ─► nothing found: with plain_answer (a model that answers in plain text), the text is
            the final answer; else FormatError
         ─► action: known tool (or its unambiguous spelling) ─► bind its input to the tool's
            schema, mapping drifted names and types (tool_args.py) ─► ParsedReply + notes
read_reply: a reply with native tool calls ─► the first one, as a JSON action blob ─► parse_reply
            (same schema checks, same error messages); thought = the content's reasoning; its
            raw_output in the text syntax ("Thought: ...\nAction: tool(arg=...)"), so a trace
            replays in either mode. Without calls: parse_reply of the text.

Every repair made on the way is a note; the reply is untrusted input and nothing in it is
evaluated (see call_syntax.py).
"""

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from reactstep.service.parsing.arg_drift import Aliases
from reactstep.service.parsing.call_syntax import render_action
from reactstep.service.parsing.examples import example_action
from reactstep.service.parsing.readers import READERS
from reactstep.service.parsing.readers.react_text import BOLD, LABEL, SP
from reactstep.service.parsing.reasoning import split_reasoning
from reactstep.service.parsing.steps import FormatError, Step
from reactstep.service.parsing.text_parts import OBSERVATION, thought_before
from reactstep.service.parsing.tool_args import ArgumentError

__all__ = [
    "FormatError",
    "ParsedAction",
    "ParsedReply",
    "ReadReply",
    "parse_reply",
    "read_reply",
    "render_action",
]

MAX_REPLY_CHARS = 200_000

# Where an action may begin, in any format: only an observation after one is hallucinated.
_ACTION_START = re.compile(
    rf"^{SP}`?{BOLD}{SP}action{SP}{BOLD}{SP}:|\{{\s*\"(?:action|name|tool|tool_name|function)\"\s*:"
    r"|<(?:tool>|tool_call>|function=|invoke\s)",
    re.I | re.M,
)
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
    """A parsed reply: the thought plus exactly one of action / final_answer, and the repairs made."""

    thought: str
    action: ParsedAction | None
    final_answer: str | None
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class ReadReply:
    """A reply read (read_reply), with its text-syntax rendering and how many calls were left unused."""

    parsed: ParsedReply
    raw_output: str
    ignored_calls: int = 0


def parse_reply(
    text: str,
    tools: Mapping[str, dict[str, Any]],
    aliases: Mapping[str, Aliases] | None = None,
    plain_answer: bool = False,
) -> ParsedReply:
    """Parse one model reply into its thought and exactly one action or final answer.

    `aliases` maps a tool's name to the argument names models write for its parameters;
    `plain_answer`: a reply with no action or answer in any format is the final answer.
    """
    if len(text) > MAX_REPLY_CHARS:
        raise FormatError(
            f"Your reply is {len(text)} characters long; the limit is {MAX_REPLY_CHARS}. "
            "Reply with a short Thought and one Action."
        )
    reasoned = split_reasoning(text)
    try:
        return _parse(reasoned.body, tools, aliases or {}, plain_answer, reasoned.reasoning)
    except FormatError as exc:
        raise FormatError(exc.reason, _joined(reasoned.reasoning, exc.thought)) from None


def _parse(
    text: str,
    tools: Mapping[str, dict[str, Any]],
    aliases: Mapping[str, Aliases],
    plain: bool,
    reasoning: str,
) -> ParsedReply:
    body, echo = _without_echo(text)
    body, cut = _without_made_up_observation(body)
    echo += cut
    try:
        steps, problem = _read(body, tools)
        if not steps and plain and body.strip():
            return ParsedReply(reasoning, None, body.strip(), echo)
        step, thought, others = _choose(body, steps, problem)
        thought = _joined(reasoning, thought)
        if step.final is not None:
            return ParsedReply(thought, None, step.final, echo + step.notes)
        action, notes = _build_action(step, tools, aliases.get(step.tool, {}), thought)
        return ParsedReply(thought, action, None, echo + others + step.notes + notes)
    except (RecursionError, MemoryError, ValueError):
        # Hostile input can exhaust the parsers; that is the model's format problem, not a crash.
        raise FormatError(
            "Your reply is too deeply nested or malformed to parse. " + _NOTHING_FOUND
        ) from None


def after_echo(text: str) -> int | None:
    """Where the reply starts after an "Observation:" it opens with (models echo the last one before
    thinking): 0 when it opens with none, None while nothing but the echo has come (the stream uses it)."""
    echo = OBSERVATION.match(text, len(text) - len(text.lstrip()))
    if echo is None:
        return 0
    after = [m.start() for m in (LABEL.search(text, echo.end()), _ACTION_START.search(text, echo.end())) if m]
    return min(after) if after else None


def _without_echo(text: str) -> tuple[str, tuple[str, ...]]:
    """The reply without an "Observation:" echo it opens with, and a note when there was one."""
    start = after_echo(text)
    if start == 0:
        return text, ()
    rest = "" if start is None else text[start:]
    return rest, ("The reply began with an echo of the last Observation; it was left out.",)


def _without_made_up_observation(text: str) -> tuple[str, tuple[str, ...]]:
    """The reply up to the first "Observation:" that follows an action: the model must wait for it.

    A last line that is the start of "Observation:" (a stop sequence cut it) goes too, with a note.
    """
    action = _ACTION_START.search(text)
    if action is None:
        return text, ()
    observation = OBSERVATION.search(text, action.end())
    if observation is not None:
        return text[: observation.start()], ()
    last_line = text.rstrip()[text.rstrip().rfind("\n") + 1 :]
    word = last_line.strip().lower()
    if len(word) >= 3 and "observation:".startswith(word) and len(text) - len(last_line) > action.end():
        return text.rstrip()[: -len(last_line)], (
            f"The unfinished {last_line.strip()!r} ending the reply was dropped.",
        )
    return text, ()


def _read(body: str, tools: Mapping[str, Any]) -> tuple[list[Step], str]:
    """Every step the readers find, in their order, and the first problem one of them met."""
    steps: list[Step] = []
    problem = ""
    for _name, reader in READERS:
        reading = reader(body, steps, tools)
        steps += reading.steps
        problem = problem or reading.problem
    return steps, problem


def _joined(reasoning: str, thought: str) -> str:
    return "\n\n".join(part for part in (reasoning, thought) if part)


def _choose(body: str, steps: list[Step], bad_json: str) -> tuple[Step, str, tuple[str, ...]]:
    """The one step the reply makes, the thought before it, and a note on calls left unproposed.

    Several calls in a model's own tool-call format (its parallel calls): the first, the others
    named in the note; anything else ambiguous is an error."""
    if not steps:
        hint = f" A JSON action was found but is not valid ({bad_json})." if bad_json else ""
        raise FormatError(f"No action or final answer found.{hint} {_NOTHING_FOUND}", thought_before(body))
    first = min(steps, key=lambda step: step.start)
    thought = thought_before(body[: first.start])
    actions = sum(step.final is None for step in steps)
    if actions > 1 and all(step.native for step in steps):
        return first, thought, (_others_note(sorted(steps, key=lambda step: step.start)),)
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
        return first, thought, ()
    raise FormatError(problem, thought)


def _others_note(steps: list[Step]) -> str:
    """What the first of several calls leaves unproposed, for the client and the model."""
    others = "; ".join(step.raw for step in steps[1:])
    return (
        f"The reply holds {len(steps)} tool calls; the first is proposed and these were not run: "
        f"{others}. Call them one per step, each after the Observation of the one before."
    )


def _build_action(
    step: Step, tools: Mapping[str, dict[str, Any]], aliases: Aliases, thought: str
) -> tuple[ParsedAction, tuple[str, ...]]:
    """Bind the step's arguments to its tool's schema, with a note for each name or type mapped."""
    name, notes = _tool_name(step.tool, tools)
    if name is None:
        available = ", ".join(sorted(tools)) or "none"
        raise FormatError(f"Unknown tool '{step.tool}'. Available tools: {available}.", thought)
    schema = tools[name]
    try:
        args, bound = step.given.bind_noted(schema, aliases)
    except ArgumentError as exc:
        example = example_action(name, schema)
        raise FormatError(f"{name}: {exc}. Write it like: {example}", thought) from None
    return ParsedAction(name, args, step.raw), (*notes, *bound)


def _tool_name(name: str, tools: Mapping[str, Any]) -> tuple[str | None, tuple[str, ...]]:
    """The tool a name means: itself, or the one tool spelled the same up to case, "-" and "_"."""
    if name in tools:
        return name, ()
    key = name.lower().replace("-", "_")
    matches = [tool for tool in tools if tool.lower().replace("-", "_") == key]
    if len(matches) == 1:
        return matches[0], (f"Tool '{name}' was read as '{matches[0]}'.",)
    return None, ()


def read_reply(
    text: str,
    calls: Sequence[tuple[str, str]],
    tools: Mapping[str, dict[str, Any]],
    aliases: Mapping[str, Aliases] | None = None,
    plain_answer: bool = False,
) -> ReadReply:
    """A reply's action or final answer: its text parsed, or its first native tool call (name, JSON
    arguments) read as a JSON action blob through the same grammar, the thought from the text.
    FormatError (with the raw_output of a native call) when it has neither.

    `plain_answer`: content without a call is the final answer (parse_reply)."""
    if not calls:
        return ReadReply(parse_reply(text, tools, aliases, plain_answer), text)
    name, arguments = calls[0]
    thought = _native_thought(text, tools)
    blob = json.dumps({"name": name, "arguments": arguments.strip() or "{}"}, ensure_ascii=False)
    try:
        parsed = parse_reply(blob, tools, aliases)
    except FormatError as exc:
        raise NativeFormatError(exc.reason, thought, _as_text(thought, f"Action: {blob}")) from None
    action = parsed.action
    assert action is not None  # a blob is an action, never a final answer
    canonical = ParsedAction(action.tool_name, action.tool_args, _action_text(action, blob))
    raw_output = _as_text(thought, canonical.raw_action_string)
    reply_parsed = ParsedReply(thought, canonical, None, parsed.notes)
    return ReadReply(reply_parsed, raw_output, len(calls) - 1)


class NativeFormatError(FormatError):
    """A native tool call that could not be used, and how it reads in the text syntax."""

    def __init__(self, reason: str, thought: str, raw_output: str) -> None:
        super().__init__(reason, thought)
        self.raw_output = raw_output


def _native_thought(text: str, tools: Mapping[str, dict[str, Any]]) -> str:
    """The reasoning in the content: before any label, without a "Thought:" label."""
    try:
        return parse_reply(text, tools).thought
    except FormatError as exc:
        return exc.thought


def _action_text(action: ParsedAction, blob: str) -> str:
    try:
        return render_action(action.tool_name, action.tool_args)
    except (ValueError, TypeError):  # an argument name that is not a Python identifier
        return f"Action: {blob}"


def _as_text(thought: str, action: str) -> str:
    return f"Thought: {thought}\n{action}" if thought else action
