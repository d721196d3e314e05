"""Fit the prompt into the model's context window, the same way every time.

observation longer than the limit ─► head + "[... N characters removed ...]" + tail
rendered prompt ─► its JSON size in bytes bounds its tokens: within the budget? done, nothing counted
                ─► else count tokens (litellm, for the model); over the budget ─► elide the oldest
                   observations and unusable replies, as few as the estimate says, recount, repeat; the
                   system prompt then says how many were elided (elision_notice.j2)
                ─► still over the window less the least room for a reply ─► leave the oldest steps out
                   whole, one by one (left_out_notice.j2)
a request that pins the fit (prompt_fit: a recorded step's) ─► that many elided and left out, rendered
                   the same way (_rendered), nothing counted: the recorded prompt again
budget = context window - max_tokens (kept for the reply), but at least half the window
a model litellm does not know is counted with tiktoken's tokenizer, another model's: its count gets
UNKNOWN_MODEL_MARGIN more (SmolLM2's real prompt was 13% over tiktoken's count, 3,463 against 3,072)
"""

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import httpx

from reactstep.contract.step import CompletedStep, FormatErrorStep, HistoryItem
from reactstep.service.llm.gateway import count_tokens, model_facts
from reactstep.service.llm.protocol import Message
from reactstep.service.step.prompting import render

# (history, how many of its observations are elided, how many older items were left out) -> the messages
RenderPrompt = Callable[[Sequence[HistoryItem], int, int], list[Message]]

# Open models' tokenizers make more tokens of the same text than tiktoken's (code and markup most):
# a quarter more keeps such a prompt inside its window, at the cost of eliding a little early.
UNKNOWN_MODEL_MARGIN = 1.25


# Counting with the model server's tokenizer, message by message: the chat template's own tokens around
# each message (ChatML's markers are 4-5; 12 covered a native step's real prompt on SmolLM2), counted on
# the high side. The tool schemas count as the server measured them (server_facts.tool_tokens), else as
# their JSON: SmolLM2's tokenizer makes 3,381 tokens of it where chatml-function-calling adds 3,128.
PER_MESSAGE_TOKENS = 12


@dataclass(frozen=True)
class TokenMeter:
    """Measures prompts for one model and tool set, with the model server's tokenizer when it has one."""

    model: str
    tools: tuple[dict[str, Any], ...] = ()
    server_count: Callable[[str], int] | None = None
    tools_tokens: int | None = None  # the tool schemas as the server renders them, when it measured them

    def upper_bound(self, messages: Sequence[Message]) -> int:
        """No tokenizer makes more tokens than the UTF-8 bytes of the JSON it is sent as."""
        return len(json.dumps([list(messages), list(self.tools)], ensure_ascii=False).encode())

    def count(self, messages: Sequence[Message]) -> int:
        """The prompt's tokens, by the model server's tokenizer when it offers one, else by litellm's;
        UNKNOWN_MODEL_MARGIN more for a model litellm does not know (no context window in its table),
        whose tokens it counts with tiktoken's."""
        if self.server_count is not None:
            try:
                return self._counted_by_server(self.server_count, messages)
            except (httpx.HTTPError, ValueError, KeyError):  # the server's tokenizer went away:
                pass  # count as for any model litellm does not know
        tokens = count_tokens(self.model, messages, self.tools)
        if model_facts(self.model).context_window is None:
            return math.ceil(tokens * UNKNOWN_MODEL_MARGIN)
        return tokens

    def _counted_by_server(self, count: Callable[[str], int], messages: Sequence[Message]) -> int:
        text = "\n".join(_message_text(message) for message in messages)
        tools = self.tools_tokens
        if tools is None:
            tools = count(json.dumps(list(self.tools))) if self.tools else 0
        return count(text) + PER_MESSAGE_TOKENS * len(messages) + tools


def _message_text(message: Message) -> str:
    """What of a message the template renders: its role, content and tool calls."""
    calls = message.get("tool_calls")
    return f"{message.get('role', '')}\n{message.get('content') or ''}" + (json.dumps(calls) if calls else "")


@dataclass(frozen=True)
class FittedPrompt:
    """The messages to send, and what fitting them did."""

    messages: list[Message]
    elided: int = 0  # observations and unusable replies elided, oldest first
    prompt_tokens: int | None = None  # counted only when the byte bound could not settle it
    over_by: int = 0  # tokens still over the budget after every observation was elided
    elided_replies: int = 0  # of the elided, unusable replies
    left_out: int = 0  # the oldest history items not sent at all (every observation elided was not enough)


def prompt_budget(window: int, max_tokens: int) -> int:
    """Tokens the prompt may use: the window less the reply's room, but at least half the window."""
    return max(window - max_tokens, window // 2)


def prompt_limit(window: int, max_tokens: int) -> int:
    """Tokens past which the oldest steps are left out: the window less the least room for a reply
    (max_tokens, at most an eighth of the window)."""
    return window - min(max_tokens, window // 8)


def cut_observation(text: str, limit: int) -> str:
    """The text, or its head and tail with how many characters were removed between them."""
    if len(text) <= limit:
        return text
    head = limit // 2
    tail = limit - head
    marker = render("observation_cut", removed=len(text) - limit)
    return f"{text[:head]}\n{marker}\n{text[len(text) - tail :]}"


def cut_observations(history: Sequence[HistoryItem], limit: int) -> tuple[list[HistoryItem], int]:
    """The history with long observations cut, and how many were."""
    result: list[HistoryItem] = []
    cut = 0
    for item in history:
        if isinstance(item, CompletedStep) and len(item.observation) > limit:
            item = item.model_copy(update={"observation": cut_observation(item.observation, limit)})
            cut += 1
        result.append(item)
    return result, cut


def fit_prompt(
    history: Sequence[HistoryItem], render_prompt: RenderPrompt, meter: TokenMeter, budget: int, limit: int
) -> FittedPrompt:
    """The prompt within the budget, eliding the oldest observations and unusable replies first (the
    newest one kept: the model needs it most) when it is not; then, while it is over `limit` (the window
    less the least room a reply needs), leaving the oldest steps out whole when that keeps the newest
    observation, else eliding it too and leaving out as few of the oldest steps as that needs."""
    messages = render_prompt(history, 0, 0)
    if meter.upper_bound(messages) <= budget:
        return FittedPrompt(messages)
    tokens = meter.count(messages)
    bulky = bulky_items(history)
    older = bulky[:-1]
    elided = 0
    while tokens > budget and elided < len(older):
        elided = _enough_to_elide(history, older, elided, tokens - budget, _chars_per_token(messages, tokens))
        messages = _rendered(history, render_prompt, elided, 0)
        tokens = meter.count(messages)
    left_out = 0
    if tokens > limit:  # keep the newest observation whole if leaving older steps out makes room
        newest = bulky[-1] if bulky else len(history)
        messages, tokens, left_out = _left_out(history, elided, render_prompt, meter, limit, newest)
        if tokens > limit and bulky:  # it does not: elide it too, and leave out what must go
            elided = len(bulky)
            messages, tokens, left_out = _left_out(history, elided, render_prompt, meter, limit, len(history))
    replies = _replies(history, elided)
    return FittedPrompt(messages, elided, tokens, max(tokens - budget, 0), replies, left_out)


def pinned_prompt(
    history: Sequence[HistoryItem], render_prompt: RenderPrompt, elided: int, left_out: int
) -> FittedPrompt:
    """The prompt fitted as a request pinned it, nothing counted: the `elided` oldest observations and
    unusable replies elided and the `left_out` oldest items left out, rendered as fit_prompt renders
    them (a recorded step's prompt_fit makes the recorded prompt again, byte for byte)."""
    messages = _rendered(history, render_prompt, elided, left_out)
    return FittedPrompt(messages, elided, None, 0, _replies(history, elided), left_out)


def bulky_items(history: Sequence[HistoryItem]) -> list[int]:
    """The positions of the items elision may shorten (observations, unusable replies), oldest first."""
    return [index for index, item in enumerate(history) if _bulk(item) is not None]


def _rendered(
    history: Sequence[HistoryItem], render_prompt: RenderPrompt, elided: int, left_out: int
) -> list[Message]:
    """The one rendering of a fitted prompt: the `elided` oldest bulky items elided, the `left_out`
    oldest items not sent, and the notices counting what the model can still see was elided."""
    chosen = bulky_items(history)[:elided]
    shortened = _elide(history, chosen)
    shown = sum(index >= left_out for index in chosen)
    return render_prompt(shortened[left_out:], shown, left_out)


def _replies(history: Sequence[HistoryItem], elided: int) -> int:
    """Of the `elided` oldest bulky items, the unusable replies."""
    return sum(isinstance(history[index], FormatErrorStep) for index in bulky_items(history)[:elided])


def _left_out(
    history: Sequence[HistoryItem],
    elided: int,
    render_prompt: RenderPrompt,
    meter: TokenMeter,
    limit: int,
    most: int,
) -> tuple[list[Message], int, int]:
    """The prompt with the `elided` oldest bulky items elided and the fewest oldest items left out (at
    most `most`) that brings it within `limit`: its messages, tokens and how many were left out."""
    left_out = 0
    while True:
        messages = _rendered(history, render_prompt, elided, left_out)
        tokens = meter.count(messages)
        if tokens <= limit or left_out >= most:
            return messages, tokens, left_out
        left_out += 1


def _enough_to_elide(
    history: Sequence[HistoryItem], steps: list[int], elided: int, excess: int, chars_per_token: float
) -> int:
    """How many of the oldest observations to elide (more than now) to save about `excess` tokens."""
    saved = 0.0
    count = elided
    while count < len(steps) and (count == elided or saved < excess):
        bulk = _bulk(history[steps[count]])
        assert bulk is not None
        saved += max(len(bulk[1]) - len(_elided_text(*bulk)), 0) / chars_per_token
        count += 1
    return count


def _chars_per_token(messages: Sequence[Message], tokens: int) -> float:
    chars = sum(len(str(message.get("content") or "")) for message in messages)
    return max(chars / max(tokens, 1), 1.0)


def _elide(history: Sequence[HistoryItem], positions: Sequence[int]) -> list[HistoryItem]:
    chosen = set(positions)
    result: list[HistoryItem] = []
    for index, item in enumerate(history):
        bulk = _bulk(item) if index in chosen else None
        if bulk is not None:
            item = item.model_copy(update={bulk[0]: _elided_text(*bulk)})
        result.append(item)
    return result


def _bulk(item: HistoryItem) -> tuple[str, str] | None:
    """The field of a history item that elision may replace, and its text: a step's observation, or an
    unusable reply (a small model's rambling ones fill a 2,048-token window in two steps)."""
    if isinstance(item, CompletedStep):
        return "observation", item.observation
    if isinstance(item, FormatErrorStep):
        return "raw_output", item.raw_output
    return None


def _elided_text(field: str, text: str) -> str:
    return render("elided", what="observation" if field == "observation" else "reply", chars=len(text))
