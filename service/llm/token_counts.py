"""Prompt tokens counted once per distinct message: a step's prompt is mostly the previous step's.

A chat prompt's token count (litellm's, for every model it counts) is a sum of parts:
    count(messages, tools) = frame(model)                       the reply's priming, counted once
                           + sum(message(model, m) for m)       each message on its own
                           + tools(model, tools, messages[0])   the schemas, as placed beside the first
Each part is kept by (model, BLAKE2 digest of its JSON), so step N of a session counts only what
step N-1 did not send. The cache holds digests and integers, never prompt text, and is bounded.
"""

import hashlib
import json
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from reactstep.tools.recent import Recent

Message = dict[str, Any]
# (model, messages, tools or None) -> tokens, as the model's tokenizer counts them
Counter = Callable[[str, list[Message], list[dict[str, Any]] | None], int]

MAX_ENTRIES = 16_384


class TokenCounts:
    """A counter that counts each distinct message once per model."""

    def __init__(self, counter: Counter, max_entries: int = MAX_ENTRIES) -> None:
        self._counter = counter
        self._parts: Recent[tuple[str, ...], int] = Recent(max_entries)

    def count(self, model: str, messages: Sequence[Message], tools: Sequence[dict[str, Any]] = ()) -> int:
        """The same number the counter gives for the whole prompt."""
        if not messages:
            return self._counter(model, [], list(tools) or None)
        frame = self._part((model,), lambda: self._counter(model, [], None))
        total = frame
        for message in messages:
            total += self._part((model, _digest(message)), partial(self._alone, model, message, frame))
        if tools:
            first = [messages[0]]
            total += self._part(
                (model, _digest(messages[0]), _digest(list(tools))),
                lambda: self._counter(model, first, list(tools)) - self._counter(model, first, None),
            )
        return total

    def _alone(self, model: str, message: Message, frame: int) -> int:
        """One message's part: its count on its own, less the frame."""
        return self._counter(model, [message], None) - frame

    def __len__(self) -> int:
        """How many parts are kept."""
        return len(self._parts)

    def _part(self, key: tuple[str, ...], compute: Callable[[], int]) -> int:
        return self._parts.get_or_make(key, compute)


def _digest(value: Any) -> str:
    if isinstance(value, dict) and value.keys() == {"role", "content"} and isinstance(value["content"], str):
        text = f"{value['role']}\x00{value['content']}"  # most messages: no JSON needed
    else:
        text = json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()
