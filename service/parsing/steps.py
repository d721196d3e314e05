"""What the format readers hand back: steps found in a reply, and the refusal they may raise; and
what a reply is read into (ParsedAction, ParsedReply, ReadReply).

A step is an action or a final answer located in the reply, not yet checked against the tool's
schema; each reader (readers/) finds the steps its format writes, the chooser (reply.py) keeps one,
binding.py binds its call to the tool's schema.
"""

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from reactstep.service.parsing.tool_args import ToolInput, tool_input

FINAL_NAME = re.compile(r"final[ \t_]*answer", re.IGNORECASE)


class FormatError(Exception):
    """The reply could not be parsed; str(exc) says what was wrong, addressed to the model."""

    def __init__(self, reason: str, thought: str = "") -> None:
        super().__init__(reason)
        self.reason = reason
        self.thought = thought


@dataclass(frozen=True)
class Step:
    """An action or final answer found in the reply, with the repairs it took to read it."""

    start: int
    end: int
    raw: str = ""
    tool: str = ""
    given: ToolInput = field(default_factory=ToolInput)
    final: str | None = None
    notes: tuple[str, ...] = ()
    native: bool = False  # a model's own tool-call format, where several calls in one reply are normal


def value_step(
    name: str,
    value: Any,
    span: tuple[int, int],
    raw: str,
    tools: Mapping[str, Any],
    notes: tuple[str, ...] = (),
) -> Step:
    """A step from a tool name and its input value (object, text, scalar or nothing)."""
    start, end = span
    if name not in tools and FINAL_NAME.fullmatch(name.strip()):
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        return Step(start, end, raw, final="" if value is None else text.strip(), notes=notes)
    return Step(start, end, raw, name, tool_input(name, value), notes=notes)


def in_spans(pos: int, steps: list[Step]) -> bool:
    """Whether pos falls inside a step already found."""
    return any(step.start <= pos < step.end for step in steps)


# What a reply is read into


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


class NativeFormatError(FormatError):
    """A native tool call that could not be used, and how it reads in the text syntax."""

    def __init__(self, reason: str, thought: str, raw_output: str) -> None:
        super().__init__(reason, thought)
        self.raw_output = raw_output


@dataclass(frozen=True)
class Reading:
    """What a reply's text says before any tool is looked at: the step it makes (None for a final
    answer, `final`), the thought (its reasoning first), and the repairs made reading it."""

    thought: str
    step: Step | None
    final: str | None
    notes: tuple[str, ...]
    reasoning: str = ""
