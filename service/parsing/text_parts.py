# ruff: noqa: RUF001  (DeepSeek's tokens are written with fullwidth bars, as the model writes them)
"""Small pieces of reply text every reader needs: skipping a pattern, the thought before a step."""

import re
from collections.abc import Iterator
from contextlib import contextmanager

from reactstep.service.parsing.call_syntax import CallSyntaxError
from reactstep.service.parsing.steps import FormatError
from reactstep.service.parsing.tool_args import ArgumentError

OBSERVATION = re.compile(
    r"^[ \t]*+`?(?:\*\*|__)?[ \t]*+observation[ \t]*+(?:\*\*|__)?[ \t]*+:", re.IGNORECASE | re.MULTILINE
)
_THOUGHT_LABEL = re.compile(
    r"`?(?:\*\*|__)?[ \t]*+thought[ \t]*+(?:\*\*|__)?[ \t]*+:[ \t]*+(?:\*\*|__)?", re.I
)


def skip(pattern: re.Pattern[str], text: str, pos: int) -> int:
    """Where an always-matching (possibly empty) pattern ends when matched at pos."""
    match = pattern.match(text, pos)
    return pos if match is None else match.end()


@contextmanager
def complaint_at(body: str, start: int) -> Iterator[None]:
    """Give a locator's complaint, as a FormatError, the thought before the step at start."""
    try:
        yield
    except (FormatError, CallSyntaxError, ArgumentError) as exc:
        raise FormatError(str(exc), thought_before(body[:start])) from None


# Tokens that open a block of calls (the calls' own readers start at the first call in it).
_CALLS_OPENER = re.compile(
    r"(?:<｜tool▁calls▁begin｜>|<\|tool_calls_section_begin\|>|<minimax:tool_call>|<seed:tool_call>"
    r"|<tool_call>|<\|python_start\|>)\s*$"
)


def thought_before(before: str) -> str:
    """The reasoning text before a step, without its "Thought:" label, a fence opener or an
    "Observation:" the model wrote before it (the step is what the model did next)."""
    observation = OBSERVATION.search(before)
    text = (before if observation is None else before[: observation.start()]).rstrip()
    text = _CALLS_OPENER.sub("", text).rstrip()
    last_line = text[text.rfind("\n") + 1 :]
    # Only an unclosed fence or backtick opened the step; a closed one belongs to the thought.
    if last_line.lstrip().startswith("```") and text.count("```") % 2 == 1:
        text = text[: len(text) - len(last_line)]
    elif text.endswith("`") and text.count("`") % 2 == 1:
        text = text[:-1]
    text = text.strip()
    label = _THOUGHT_LABEL.match(text)
    return (text if label is None else text[label.end() :]).strip()
