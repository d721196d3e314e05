"""Turn a model's raw ReAct reply into one step: a tool call or a final answer.

    text ─► size limit ─► reasoning blocks out: they open the thought (below)
         ─► an "Observation:" the reply opens with (an echo) left out
         ─► cut at the first "Observation:" line after an action (hallucinated: the model must wait)
         ─► format readers in their fixed order (readers/__init__.py), each outside the spans
            the earlier ones found
         ─► exactly one action xor one final answer, else FormatError; several calls in a
            model's own tool-call format: the first, the others named in a note (never run)
         ─► nothing found: with plain_answer (a model that answers in plain text), the text is
            the final answer; else FormatError
         ─► action: bound to its tool's schema (binding.py) ─► ParsedReply + notes
read_reply: a reply with native tool calls ─► the first one, as a JSON action blob, read as above;
            thought = the content's reasoning; raw_output in the text syntax ("Thought: ...\nAction:
            tool(arg=...)"), so a trace replays in either mode. Without calls: the text, read as above.

Reasoning blocks (taken out, they open the thought): <think>..</think> (DeepSeek R1, Qwen3, GLM-4.5,
MiniMax; R1's template opens <think> in the prompt, so a reply may hold only the closing tag),
<seed:think> (Seed-OSS), [THINK] (Magistral, Ministral 3), ◁think▷ (Kimi VL), GPT-OSS's harmony
analysis channel and its preamble (<|channel|>commentary<|message|>..<|end|>, no recipient) before
a call. What follows a block is read as the reply; a block that never closes is refused, naming
the closing tag. Every repair made on the way is a note; nothing in the reply is evaluated.
"""

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from reactstep.service.parsing.binding import Aliases, bind_action
from reactstep.service.parsing.readers import READERS
from reactstep.service.parsing.readers.react_text import BOLD, LABEL, SP
from reactstep.service.parsing.steps import (
    FormatError,
    NativeFormatError,
    ParsedAction,
    ParsedReply,
    Reading,
    ReadReply,
    Step,
)
from reactstep.service.parsing.text_parts import OBSERVATION, thought_before

__all__ = [
    "FormatError",
    "ParsedAction",
    "ParsedReply",
    "ReadReply",
    "parse_reply",
    "read_reply",
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
TOO_NESTED = "Your reply is too deeply nested or malformed to parse. " + _NOTHING_FOUND


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
    return read_reply(text, (), tools, aliases, plain_answer).parsed


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
    blob = native_text = ""
    if not calls:
        reading = read_text(text, tools, plain_answer)
        thought = reading.thought
    else:
        try:
            thought = read_text(text, tools, False).thought  # the content's reasoning
        except FormatError as exc:
            thought = exc.thought
        name, arguments = calls[0]
        blob = json.dumps({"name": name, "arguments": arguments.strip() or "{}"}, ensure_ascii=False)
        native_text = f"Thought: {thought}\nAction: {blob}" if thought else f"Action: {blob}"
        try:
            reading = read_text(blob, tools, False)
        except FormatError as exc:
            raise NativeFormatError(exc.reason, thought, native_text) from None
    if reading.step is None:
        return ReadReply(ParsedReply(thought, None, reading.final, reading.notes), text)
    try:
        action, notes = bind_action(reading.step, tools, aliases or {}, thought, blob)
    except FormatError as exc:
        if calls:
            raise NativeFormatError(exc.reason, thought, native_text) from None
        raise
    except (RecursionError, MemoryError, ValueError):  # hostile input can exhaust the schema check too
        if calls:
            raise NativeFormatError(TOO_NESTED, thought, native_text) from None
        raise FormatError(TOO_NESTED, reading.reasoning) from None
    parsed = ParsedReply(thought, action, None, (*reading.notes, *notes))
    if not calls:
        return ReadReply(parsed, text)
    action_text = action.raw_action_string
    return ReadReply(parsed, f"Thought: {thought}\n{action_text}" if thought else action_text, len(calls) - 1)


def read_text(text: str, tools: Mapping[str, Any], plain: bool) -> Reading:
    """The step a reply's text makes (no tool looked at yet), or a FormatError; the thought opens with
    the reasoning blocks' text."""
    if len(text) > MAX_REPLY_CHARS:
        raise FormatError(
            f"Your reply is {len(text)} characters long; the limit is {MAX_REPLY_CHARS}. "
            "Reply with a short Thought and one Action."
        )
    reasoned = split_reasoning(text)
    try:
        reading = _read_body(reasoned.body, tools, plain)
    except FormatError as exc:
        raise FormatError(exc.reason, _joined(reasoned.reasoning, exc.thought)) from None
    return replace(
        reading, thought=_joined(reasoned.reasoning, reading.thought), reasoning=reasoned.reasoning
    )


def _read_body(text: str, tools: Mapping[str, Any], plain: bool) -> Reading:
    body, echo = _without_echo(text)
    body, cut = _without_made_up_observation(body)
    echo += cut
    try:
        steps, problem = _read(body, tools)
        if not steps and plain and body.strip():
            return Reading("", None, body.strip(), echo)
        step, thought, others = _choose(body, steps, problem)
    except (RecursionError, MemoryError, ValueError):
        # Hostile input can exhaust the parsers; that is the model's format problem, not a crash.
        raise FormatError(TOO_NESTED) from None
    if step.final is not None:
        return Reading(thought, None, step.final, echo + step.notes)
    return Reading(thought, step, None, echo + others + step.notes)


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


# Reasoning blocks

_BLOCKS: tuple[tuple[str, str], ...] = (("<think>", "</think>"), ("<thinking>", "</thinking>"))
_BLOCKS += (("<seed:think>", "</seed:think>"),)
_BLOCKS += (("[THINK]", "[/THINK]"),)
_BLOCKS += (("◁think▷", "◁/think▷"), ("<|channel|>analysis<|message|>", "<|end|>"))
# GPT-OSS's preamble before its calls: what it says it will do, read as part of the thought.
_BLOCKS += (("<|channel|>commentary<|message|>", "<|end|>"),)
_OPEN = re.compile("|".join(re.escape(opening) for opening, _ in _BLOCKS), re.IGNORECASE)
_CLOSE = re.compile("|".join(re.escape(closing) for _, closing in _BLOCKS), re.IGNORECASE)
_HARMONY_START = re.compile(r"<\|start\|>\s*assistant\s*$")
_HARMONY_LEAD = re.compile(r"<\|start\|>\s*assistant\s*")
_CLOSING = {opening.lower(): closing for opening, closing in _BLOCKS}


CLOSINGS = tuple(closing for _, closing in _BLOCKS)
# Each closing tag, found case-insensitively from a position (lower() may change a text's length).
CLOSING_TAG = {closing: re.compile(re.escape(closing), re.IGNORECASE) for closing in CLOSINGS}


def opening(text: str) -> tuple[int, str] | bool | None:
    """For a reply's start: (where its reasoning opener ends, the closing tag), False when it opens with
    none, None while more text could still make one (the thought stream asks as the reply arrives)."""
    head = text.lstrip()
    lead = _HARMONY_LEAD.match(head)
    rest = head[lead.end() :] if lead else head
    if lead is None and "<|start|>assistant".startswith(head):
        return None
    opened = _OPEN.match(rest)
    if opened is not None:
        return len(text) - len(rest) + opened.end(), _CLOSING[opened.group().lower()]
    if any(opener.lower().startswith(rest.lower()) for opener, _ in _BLOCKS):
        return None
    return False


@dataclass(frozen=True)
class Reasoned:
    """The reply with its reasoning blocks taken out, and their text (joined, stripped)."""

    body: str
    reasoning: str = ""


def split_reasoning(text: str) -> Reasoned:
    """The reply without its reasoning blocks; FormatError when a block is left open."""
    parts: list[str] = []
    kept: list[str] = []
    pos = 0
    first_open = _OPEN.search(text)
    orphan = _CLOSE.search(text)
    if orphan is not None and (first_open is None or orphan.start() < first_open.start()):
        parts.append(text[: orphan.start()])  # the template opened the block in the prompt
        pos = orphan.end()
    while (opened := _OPEN.search(text, pos)) is not None:
        kept.append(_HARMONY_START.sub("", text[pos : opened.start()]))
        closing = _CLOSING[opened.group().lower()]
        found = CLOSING_TAG[closing].search(text, opened.end())
        close = -1 if found is None else found.start()
        if close < 0:
            reasoning = _joined_parts([*parts, text[opened.end() :]])
            raise FormatError(
                f"Your reply opens {opened.group()} and never closes it: {closing} is missing, so no "
                f"action or answer follows your reasoning. Close it with {closing}, then write the call "
                "or the answer.",
                reasoning,
            )
        parts.append(text[opened.end() : close])
        pos = close + len(closing)
    kept.append(text[pos:])
    if not parts:
        return Reasoned(text)
    return Reasoned("".join(kept).strip(), _joined_parts(parts))


def _joined_parts(parts: list[str]) -> str:
    return "\n\n".join(part.strip() for part in parts if part.strip())
