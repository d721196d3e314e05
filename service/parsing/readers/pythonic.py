"""A Python list of calls as the whole action: Llama 3.2 and Llama 4's pythonic tool calls.

    [get_weather(city="Paris"), read_file(file_path="a.py")]
    <|python_start|>[read_file(file_path="a.py")]<|python_end|>

The list starts a line and its first item is a call, so prose in brackets is not read. Each call is
a step of its own (reply.py proposes the first and names the rest); arguments are literals, never
evaluated (call_syntax.py). A list the reply never closes is refused, naming the missing "]".
"""

import re
from collections.abc import Mapping
from typing import Any

from reactstep.service.parsing.call_syntax import CallSyntaxError, parse_call
from reactstep.service.parsing.readers.reading import Reading
from reactstep.service.parsing.steps import FormatError, Step, in_spans
from reactstep.service.parsing.text_parts import complaint_at
from reactstep.service.parsing.tool_args import ToolInput

_LIST = re.compile(r"^[ \t]*(?:<\|python_start\|>\s*)?\[\s*(?=[A-Za-z_][\w.-]*\s*\()", re.MULTILINE)
STARTS = ("<|python_start|>",)  # where a Llama 4 list of calls begins (the streamed thought ends there)
_CUT_OFF = 'The list of calls is cut off: "]" is missing after its last call. Send the whole list again.'
_SEPARATOR = re.compile(r"\s*(,)?\s*")
_CLOSE = re.compile(r"\]\s*(?:<\|python_end\|>)?(?:\s*<\|eom\|>|\s*<\|eot\|>)?")


def read(body: str, taken: list[Step], tools: Mapping[str, Any]) -> Reading:
    """The calls of each list of calls, outside the steps already taken."""
    steps: list[Step] = []
    pos = 0
    for match in _LIST.finditer(body):
        if match.start() < pos or in_spans(match.start(), taken):
            continue
        with complaint_at(body, match.start()):
            found, pos = _calls(body, match)
        steps += found
    return Reading(steps)


def _calls(body: str, match: re.Match[str]) -> tuple[list[Step], int]:
    start, pos = match.start(), match.end()
    calls = []
    while True:
        try:
            call = parse_call(body, pos)
        except CallSyntaxError:
            if "]" in body[pos:]:
                raise
            raise FormatError(_CUT_OFF) from None
        calls.append((call, body[pos : call.end]))
        separator = _SEPARATOR.match(body, call.end)
        pos = separator.end() if separator else call.end
        if not (separator and separator[1]) or body.startswith("]", pos):
            break
    close = _CLOSE.match(body, pos)
    if close is None:
        raise FormatError(_CUT_OFF)
    end = close.end()
    steps = []
    for index, (call, text) in enumerate(calls):
        span = (start, end) if index == 0 else (start + index, start + index + 1)
        raw = body[start:end].strip() if index == 0 else text
        given = ToolInput(call.positional, call.keywords)
        steps.append(Step(span[0], span[1], raw, call.name, given, native=True))
    return steps, end
