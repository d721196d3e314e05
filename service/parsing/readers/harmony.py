"""GPT-OSS's harmony format, read from its channel tokens (the analysis channel is reasoning.py's).

    <|start|>assistant<|channel|>commentary to=functions.read_file <|constrain|>json<|message|>{..}<|call|>
    <|start|>assistant to=functions.read_file<|channel|>commentary json<|message|>{..}<|call|>
    <|channel|>final<|message|>The answer.<|return|>

A call's JSON must be complete (<|call|> may be missing: servers often drop the end token); the
final channel is the answer.
"""

import re
from collections.abc import Mapping
from typing import Any

from reactstep.service.parsing.lenient_json import STRICT_JSON
from reactstep.service.parsing.readers.reading import Reading
from reactstep.service.parsing.steps import FormatError, Step, in_spans, value_step
from reactstep.service.parsing.text_parts import complaint_at

_MESSAGE = re.compile(
    r"(?:<\|start\|>\s*assistant\s*)?(?P<header>(?:to=functions\.[\w.-]+\s*)?<\|channel\|>[^<]*"
    r"(?:<\|constrain\|>\s*\w+\s*)?)<\|message\|>"
)
_RECIPIENT = re.compile(r"to=functions\.([\w.-]+)")
_CHANNEL = re.compile(r"<\|channel\|>\s*(\w+)")
_MESSAGE_END = re.compile(r"<\|(?:end|call|return)\|>")
# Where a channel begins, anywhere in a line (the streamed thought ends there).
STARTS = ("to=functions.", "<|channel|>", "<|start|>")


def read(body: str, taken: list[Step], tools: Mapping[str, Any]) -> Reading:
    """The calls and the final answer the channels hold."""
    steps: list[Step] = []
    for match in _MESSAGE.finditer(body):
        if in_spans(match.start(), taken):
            continue
        with complaint_at(body, match.start()):
            step = _step(body, match, tools)
        if step is not None:
            steps.append(step)
    return Reading(steps)


def _step(body: str, match: re.Match[str], tools: Mapping[str, Any]) -> Step | None:
    header = match["header"]
    recipient = _RECIPIENT.search(header)
    closing = _MESSAGE_END.search(body, match.end())
    end = closing.end() if closing else len(body)
    content = body[match.end() : closing.start() if closing else len(body)]
    if recipient is None:
        channel = _CHANNEL.search(header)
        if channel is None or channel[1] != "final":
            return None
        return Step(match.start(), end, body[match.start() : end].strip(), final=content.strip())
    name = recipient[1]
    try:
        value, _ = STRICT_JSON.raw_decode(content.strip())
    except ValueError:
        raise FormatError(
            f"The call of {name} is cut off or not JSON: its arguments must be one complete JSON object."
        ) from None
    step = value_step(name, value, (match.start(), end), body[match.start() : end].strip(), tools)
    return Step(step.start, step.end, step.raw, step.tool, step.given, step.final, step.notes, native=True)
