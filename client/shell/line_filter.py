"""bash_output's filter: a regular expression from the model, run here on the command's output lines.

Python's `re` backtracks, so a pattern from the model is held to a subset that cannot blow up on a line:
no backreferences, no lookarounds, and no repeated group that itself repeats or alternates (`(a+)+`,
`(a|ab)*`). Anything else `re` compiles is accepted. The client depends on nothing but httpx and
pydantic, so RE2 (the server's engine for the same job) is not here.
"""

import re

_QUANTIFIER = re.compile(r"[*+?]|\{\d*,?\d*\}")
_BACKREFERENCE = re.compile(r"\\([1-9]|g<)")
_LOOKAROUND = ("(?=", "(?!", "(?<=", "(?<!", "(?P=")


class UnsafeFilter(ValueError):
    """The pattern is not valid, or not in the subset; the message says why."""


def compile_filter(pattern: str) -> re.Pattern[str]:
    """The compiled pattern, or UnsafeFilter."""
    try:
        compiled = re.compile(pattern)
    except re.error as exc:
        raise UnsafeFilter(str(exc)) from None
    _check_subset(pattern)
    return compiled


def _check_subset(pattern: str) -> None:
    # One frame per open group: [repeats inside, alternates inside]; the first is the whole pattern.
    frames: list[list[bool]] = [[False, False]]
    at = 0
    while at < len(pattern):
        char = pattern[at]
        if char == "\\":
            if _BACKREFERENCE.match(pattern, at):
                raise UnsafeFilter("backreferences are not supported")
            at += 2
            continue
        if char == "[":
            at = _class_end(pattern, at)
            continue
        if char == "(":
            if pattern.startswith(_LOOKAROUND, at):
                raise UnsafeFilter("lookarounds and backreferences are not supported")
            frames.append([False, False])
        elif char == ")":
            repeats, alternates = frames.pop()
            quantified = _QUANTIFIER.match(pattern, at + 1) is not None
            if quantified and (repeats or alternates):
                raise UnsafeFilter(
                    f"the repeated group ending at position {at} repeats or alternates inside "
                    "(e.g. (a+)+): it could take exponential time"
                )
            frames[-1][0] |= repeats or quantified
        elif char == "|":
            frames[-1][1] = True
        elif _QUANTIFIER.match(pattern, at) is not None and not pattern.startswith("(?", at - 1):
            frames[-1][0] = True
        at += 1


def _class_end(pattern: str, start: int) -> int:
    """The index after the character class opening at `start` (re.compile has checked it closes)."""
    at = start + 1
    if pattern[at : at + 1] == "^":
        at += 1
    if pattern[at : at + 1] == "]":
        at += 1
    while at < len(pattern) and pattern[at] != "]":
        at += 2 if pattern[at] == "\\" else 1
    return at + 1
