"""The thought, as it streams: the reply's text deltas without the "Thought:" label, up to the first line
that starts an action, an answer, an observation or a JSON action (so the action never leaks as thought).

    "Thought: I will read it.\\nAction: read_file(...)"  ─►  "I will read it."  (in as many deltas)

A line that might still become such a label ("Act", "**Final") is held until it is clear, and so is
trailing whitespace; what is shown is never taken back, and for a well-formed reply the deltas add up
to the step's `thought`. An "Observation:" the reply opens with (an echo) is held until the reply moves
on, and is never shown.
"""

import re

from reactstep.service.parsing.reply import after_echo

_STOP = re.compile(
    r"[ \t]*(?:```|\{|[`*_]*[ \t]*(?:final[ \t_]*answer|answer|action[ \t_]*input|action|observation)"
    r"[ \t]*[`*_]*[ \t]*:)",
    re.IGNORECASE,
)
_STOP_WORDS = ("final answer", "answer", "action input", "action", "observation")
_THOUGHT_LABEL = re.compile(r"\s*[`*_]*[ \t]*thought[ \t]*[`*_]*[ \t]*:[ \t]*(?:\*\*|__)?\s*", re.IGNORECASE)
_MARKUP = " \t`*_"
_DECIDING_CHARS = 40


class ThoughtStream:
    """Feed it the reply's text deltas; it returns the part of each that is certainly thought."""

    def __init__(self) -> None:
        self._text = ""  # the reply after its "Thought:" label, once that is decided
        self._lead: str | None = ""  # the start of the reply while a label there is undecided, then None
        self._shown = 0  # characters of _text already returned
        self._line = 0  # start of the first line not yet known to be thought
        self._done = False  # an action, answer or observation has begun

    def feed(self, delta: str) -> str:
        """The thought text this delta makes certain ('' when nothing new is)."""
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
        if self._done:
            return ""
        return self._show(_trimmed_end(self._text, len(self._text)))

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
        while True:
            if _STOP.match(self._text, self._line):
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


def _trimmed_end(text: str, end: int) -> int:
    """`end`, moved back over whitespace."""
    while end and text[end - 1].isspace():
        end -= 1
    return end


def _could_be_label(line: str) -> bool:
    """A line start that more text could still turn into a stop label or a fence."""
    stripped = line.lstrip(" \t")
    if not stripped or "```".startswith(stripped):
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
