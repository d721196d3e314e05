"""react_step with `"stream": true`: the same step, answered as Server-Sent Events (http/event_stream.py).

    prepare (a broken request is still a JSON 4xx: nothing has been streamed yet)
    event: thought  data: {"delta": "..."}      the thought as the model writes it (ThoughtStream)
    ...
    event: result   data: <the non-streaming response body>        exactly one terminal event,
    event: error    data: {"error": {"code", "message", "request_id"}}  one or the other

Faults before the first delta are retried like any call, and a server that answers a call that may
use a tool with an empty stream is asked for the whole reply, one thought delta (call.py). A stream
that breaks off is an error event, never a parsed action. When the client disconnects, the response
task is cancelled, and closing the upstream stream closes the connection to the provider.

The thought is the reply's text deltas without the "Thought:" label, up to the first line that starts
an action, an answer, an observation or a JSON action (so the action never leaks as thought):

    "Thought: I will read it.\\nAction: read_file(...)"  ─►  "I will read it."  (in as many deltas)

A line that might still become such a label ("Act", "**Final") is held until it is clear, and so is
trailing whitespace; what is shown is never taken back, and for a well-formed reply the deltas add up
to the step's `thought`. An "Observation:" the reply opens with (an echo) is held until the reply moves
on, and is never shown. A reasoning block the reply opens with (<think>.., parsing.reply) streams as
the thought's first part; the text after it follows, as the parser joins them. An open model's
tool-call marker (<tool_call>, [TOOL_CALLS], <|tool_call|> ...) ends the thought wherever it starts,
and is held until it is clear.
"""

import json
import logging
import re
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

from reactstep.contract.step import ReactStepResponse
from reactstep.service.errors import INTERNAL_ERROR, ServiceError, error_body
from reactstep.service.parsing.readers import CALL_STARTS
from reactstep.service.parsing.reply import CLOSING_TAG, CLOSINGS, after_echo, opening

logger = logging.getLogger("reactstep")


async def step_events(
    replies: AsyncGenerator[str | ReactStepResponse, None], plain_answer: bool
) -> AsyncIterator[bytes]:
    """The step's events from call.step_reply's items: thought deltas, then the result or an error."""
    try:
        thought = ThoughtStream(plain_answer)
        async for item in replies:
            if isinstance(item, str):
                if delta := thought.feed(item):
                    yield event("thought", {"delta": delta})
                continue
            if tail := thought.finish():
                yield event("thought", {"delta": tail})
            yield event("result", item.model_dump(mode="json", exclude_none=True))
    except ServiceError as error:
        yield error_event(error)
    except Exception as exc:  # never a silent stop: the client gets an error event it can report
        logger.error("unexpected error in a react_step stream", exc_info=exc)
        yield error_event(ServiceError(INTERNAL_ERROR))
    finally:
        await replies.aclose()  # closes the upstream stream when the client left early


def event(name: str, data: dict[str, Any]) -> bytes:
    """One SSE event; the data is one line of JSON, rendered as JSONResponse renders bodies."""
    payload = json.dumps(data, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return f"event: {name}\ndata: {payload}\n\n".encode()


def error_event(error: ServiceError) -> bytes:
    """Every stream's error event: the body an error answer would carry (errors.error_body)."""
    return event("error", error_body(error))


# The thought, as it streams

_STOP = re.compile(
    r"[ \t]*(?:```|\{|[`*_]*[ \t]*(?:final[ \t_]*answer|answer|action[ \t_]*input|action|observation)"
    r"[ \t]*[`*_]*[ \t]*:)",
    re.IGNORECASE,
)
_STOP_WORDS = ("final answer", "answer", "action input", "action", "observation")
_THOUGHT_LABEL = re.compile(r"\s*[`*_]*[ \t]*thought[ \t]*[`*_]*[ \t]*:[ \t]*(?:\*\*|__)?\s*", re.IGNORECASE)
_MARKUP = " \t`*_"
_DECIDING_CHARS = 40
# Where an open model's call begins, anywhere in a line (the readers' markers), and a reasoning block
# opened mid-reply.
_MARKERS = (*CALL_STARTS, "<think>")
_LONGEST_CLOSING = max(map(len, CLOSINGS))
_LONGEST_MARKER = max(map(len, _MARKERS))
_MARKER_FIRSTS = {marker[0] for marker in _MARKERS}
_MARKER = re.compile("|".join(re.escape(marker) for marker in _MARKERS))
_CALL_LIST = re.compile(r"[ \t]*\[\s*(?:[A-Za-z_][\w.-]*\s*\(|\{)")
_CALL_LIST_START = re.compile(r"[ \t]*\[\s*[A-Za-z_]?[\w.-]*\s*")


class ThoughtStream:
    """Feed it the reply's text deltas; it returns the part of each that is certainly thought."""

    def __init__(self, plain_answer: bool = False) -> None:
        # plain_answer (reply_format native_text): text that no call or label follows is the answer,
        # so the text after the reasoning is held until a call or label shows it is thought.
        self._plain = plain_answer
        self._orphan: list[str] | None = []  # the thought's raw text while a closing tag could still come
        self._held = ""  # its end, held back while it could be the start of a closing tag
        self._orphan_shown: list[str] = []  # what the thought showed of it
        self._head: str | None = ""  # the reply's start while a reasoning opener there is undecided
        self._closing: str | None = None  # the reasoning block's closing tag while inside it
        self._reasoning = ""  # the block's text so far
        self._reasoning_shown = 0  # characters of the stripped block text already returned
        self._separate = False  # the reasoning showed text: the thought after it starts with a break
        self._start_thought()

    def _start_thought(self) -> None:
        """The thought's own state, fresh (again after reasoning that a closing tag revealed)."""
        self._text = ""  # the reply after its "Thought:" label, once that is decided
        self._scanned = 0  # characters of _text already searched for a call marker
        self._lead: str | None = ""  # the start of the reply while a label there is undecided, then None
        self._shown = 0  # characters of _text already returned
        self._line = 0  # start of the first line not yet known to be thought
        self._done = False  # an action, answer or observation has begun

    def feed(self, delta: str) -> str:
        """The thought text this delta makes certain ('' when nothing new is)."""
        if self._head is not None:
            self._head += delta
            found = opening(self._head)
            if found is None:
                return ""
            head, self._head = self._head, None
            if not isinstance(found, tuple):
                return self._thought(head)
            end, self._closing = found
            return self._in_reasoning(head[end:])
        if self._closing is not None:
            return self._in_reasoning(delta)
        return self._thought(delta)

    def _in_reasoning(self, delta: str) -> str:
        """The block's text this delta makes certain; past its closing tag, the thought that follows."""
        assert self._closing is not None
        closing = self._closing
        begin = max(len(self._reasoning) - len(closing) + 1, 0)
        self._reasoning += delta
        found = CLOSING_TAG[closing].search(self._reasoning, begin)
        if found is None:  # hold what could be the start of the closing tag
            return self._show_reasoning(max(len(self._reasoning) - len(closing) + 1, 0))
        shown = self._show_reasoning(found.start())
        self._separate = self._separate or self._reasoning_shown > 0
        rest, self._closing, self._orphan = self._reasoning[found.end() :], None, None
        self._reasoning, self._reasoning_shown = "", 0
        self._head = ""  # another block may follow at once (GPT-OSS's preamble after its analysis)
        return shown + self.feed(rest)

    def _show_reasoning(self, end: int) -> str:
        """The block's text up to `end`, without the whitespace around it."""
        end = _trimmed_end(self._reasoning, end)
        begin = self._reasoning_shown or len(self._reasoning) - len(self._reasoning.lstrip())
        if end <= begin:
            return ""
        shown, self._reasoning_shown = self._reasoning[begin:end], end
        if self._separate:
            shown, self._separate = "\n\n" + shown, False
        return shown

    def _thought(self, delta: str) -> str:
        """The thought; a closing tag with no opener (the template opened the block) makes what came
        before it reasoning, as the parser reads it."""
        if self._orphan is None:
            return self._separated(delta)
        pending, self._held = self._held + delta, ""
        closes = [found.span() for tag in CLOSING_TAG.values() if (found := tag.search(pending))]
        if closes:
            at, end = min(closes)
            reasoning = ("".join(self._orphan) + pending[:at]).strip()
            shown = "".join(self._orphan_shown)
            self._start_thought()
            self._orphan, self._separate = None, bool(reasoning)
            return (reasoning[len(shown) :] if reasoning.startswith(shown) else "") + self._thought(
                pending[end:]
            )
        tail = range(max(len(pending) - _LONGEST_CLOSING + 1, 0), len(pending))
        safe = next((at for at in tail if _starts_closing(pending[at:])), len(pending))
        self._held = pending[safe:]  # what could be the start of a closing tag
        self._orphan.append(pending[:safe])
        shown = self._separated(pending[:safe])
        self._orphan_shown.append(shown)
        return shown

    def _separated(self, delta: str) -> str:
        shown = self._thought_delta(delta)
        if shown and self._separate:
            shown, self._separate = "\n\n" + shown, False
        return shown

    def _thought_delta(self, delta: str) -> str:
        if self._done:
            return ""
        if self._lead is not None:
            self._lead += delta
            if not self._decide_lead():
                return ""
        else:
            self._text += delta
        return self._show(self._safe_end())

    def finish(self) -> str:
        """At the end of the reply: what was held back and turned out to be thought."""
        if self._head is not None:
            head, self._head = self._head, None
            return self._thought(head) + self.finish()
        if self._closing is not None:  # never closed: the parser's thought is the whole block
            return self._show_reasoning(len(self._reasoning))
        if self._held:
            rest, self._held = self._held, ""
            return self._separated(rest) + self.finish()
        if self._done:
            return ""
        if self._plain:
            return ""  # no call and no label followed: the text is the answer
        shown = self._show(_trimmed_end(self._text, len(self._text)))
        if shown and self._separate:
            shown, self._separate = "\n\n" + shown, False
        return shown

    def _decide_lead(self) -> bool:
        """Move the reply's start past an echoed "Observation:" and a "Thought:" label; False while that
        is still undecided."""
        text = (self._lead or "").lstrip()
        start = after_echo(text)  # an echo of the last observation is not thought, as the parser says
        if start is None or _could_be_word(text, "observation"):
            return False
        text = text[start:]
        label = _THOUGHT_LABEL.match(text)
        if label is not None and text[label.end() :].lstrip(_MARKUP):
            self._text = text[label.end() :]
        elif not text or label is not None or _could_be_thought_label(text):
            return False
        else:
            self._text = text
        self._lead = None
        return True

    def _safe_end(self) -> int:
        """How much of the text is certainly thought now; marks the end when a stop line begins."""
        # Only the new text (and a marker it may complete) can hold a marker not seen before.
        marker = _MARKER.search(self._text, max(self._line, self._scanned - _LONGEST_MARKER))
        self._scanned = len(self._text)
        end = self._line_end()
        if marker is not None and (not self._done or marker.start() < end):
            self._done = True  # a call begins: the thought ends there
            return min(end, _trimmed_end(self._text, marker.start()))
        held = None if self._done else _partial_marker(self._text, self._line)
        if self._plain and not self._done:
            return self._shown  # held: unless a call or label follows, it is the answer
        return min(end, _trimmed_end(self._text, held)) if held is not None else end

    def _line_end(self) -> int:
        while True:
            if _STOP.match(self._text, self._line) or _CALL_LIST.match(self._text, self._line):
                self._done = True
                return _trimmed_end(self._text, self._line)
            line_end = self._text.find("\n", self._line)
            if line_end < 0:
                # Labels are short: the line's first characters decide, however long it grows.
                if _could_be_label(self._text[self._line : self._line + _DECIDING_CHARS]):
                    return _trimmed_end(self._text, self._line)
                return _trimmed_end(self._text, len(self._text))
            self._line = line_end + 1

    def _show(self, end: int) -> str:
        if end <= self._shown:
            return ""
        shown, self._shown = self._text[self._shown : end], end
        return shown


def _starts_closing(text: str) -> bool:
    """The text is the start of a reasoning block's closing tag."""
    return text[:1] in "<[◁" and any(closing.lower().startswith(text.lower()) for closing in CLOSINGS)


def _partial_marker(text: str, start: int) -> int | None:
    """Where a marker that more text could complete begins, in the last line (None when none does)."""
    line = text.rfind("\n", len(text) - _LONGEST_MARKER) + 1
    for at in range(max(line, start, len(text) - _LONGEST_MARKER), len(text)):
        if text[at] in _MARKER_FIRSTS and any(marker.startswith(text[at:]) for marker in _MARKERS):
            return at
    return None


def _trimmed_end(text: str, end: int) -> int:
    """`end`, moved back over whitespace."""
    while end and text[end - 1].isspace():
        end -= 1
    return end


def _could_be_label(line: str) -> bool:
    """A line start that more text could still turn into a stop label or a fence."""
    stripped = line.lstrip(" \t")
    if not stripped or "```".startswith(stripped) or _CALL_LIST_START.fullmatch(line):
        return True
    word = re.sub(r"[ \t_]+", " ", line.lstrip(_MARKUP).lower())
    for label in _STOP_WORDS:
        if label.startswith(word) or (word.startswith(label) and not word[len(label) :].strip(_MARKUP)):
            return True
    return False


def _could_be_thought_label(text: str) -> bool:
    return _could_be_word(text, "thought")


def _could_be_word(text: str, label: str) -> bool:
    """The text is the start of `label` (in markup), or the label without its colon yet."""
    word = text.lstrip(_MARKUP).lower()
    if label.startswith(word):
        return True
    return word.startswith(label) and not word[len(label) :].strip(_MARKUP)
