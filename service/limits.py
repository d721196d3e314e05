"""Bounds on what a request or a model reply may make the server hold, each refused with its own code.

body bytes          bodies.read_limited             413 payload_too_large (declared or chunked)
JSON nesting        check_json_depth                400 json_too_deep (before pydantic sees it)
field lengths       schemas.py / openapi.yaml       422 validation_failed naming the field
history length      check_history_length            422 history_too_long
llm max_tokens      check_max_tokens                422 max_tokens_too_large
model reply size    cap_reply                       cut to MAX_REPLY_CHARS, noted
requests at work    http.admission                  503 overloaded
"""

from dataclasses import replace
from typing import Any

from reactstep.service.errors import HistoryTooLong, JSONTooDeep, MaxTokensTooLarge
from reactstep.service.llm.protocol import LLMReply

MAX_JSON_DEPTH = 32  # deeper than any body the API defines; stops a recursion bomb before pydantic
MAX_HISTORY_ITEMS = 200  # ~100 turns: more than any context window holds once rendered
MAX_REPLY_CHARS = 100_000  # a reply kept in history must fit what a request may send back


def check_json_depth(value: Any, max_depth: int = MAX_JSON_DEPTH) -> None:
    """Refuse a parsed JSON value nested deeper than max_depth arrays and objects."""
    pending: list[tuple[Any, int]] = [(value, 1)]
    while pending:
        item, depth = pending.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is None:
            continue
        if depth > max_depth:
            raise JSONTooDeep(f"the request body nests arrays and objects deeper than {max_depth} levels")
        pending.extend((child, depth + 1) for child in children if isinstance(child, dict | list))


def check_history_length(items: int, limit: int = MAX_HISTORY_ITEMS) -> None:
    """Refuse a conversation_history longer than the server's limit."""
    if items > limit:
        raise HistoryTooLong(f"conversation_history has {items} items; the limit is {limit}")


def check_max_tokens(requested: int | None, cap: int) -> None:
    """Refuse an llm_config.max_tokens above the server's cap."""
    if requested is not None and requested > cap:
        raise MaxTokensTooLarge(
            f"llm_config.max_tokens is {requested}; the limit is {cap} (REACTSTEP_LLM_MAX_TOKENS_CAP)"
        )


def cap_reply(reply: LLMReply, max_chars: int = MAX_REPLY_CHARS) -> tuple[LLMReply, str | None]:
    """The reply cut to max_chars (as if it had hit its token limit), and a note when it was cut."""
    if len(reply.text) <= max_chars:
        return reply, None
    note = f"The model's reply ({len(reply.text)} characters) was cut to the first {max_chars}."
    return replace(reply, text=reply.text[:max_chars], finish_reason="length"), note
