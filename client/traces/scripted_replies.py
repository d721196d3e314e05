"""What the scripted LLM server answers with, and the OpenAI JSON it writes for each answer.

    ScriptItem = str (reply text) | Reply (text, tool calls, finish_reason, streaming shape)
               | Fault (HTTP error, or a delay) | Recorded (a react_step response from a trace)

A Recorded step answers in the form the request asks for: a request that offers tools (native tool
calling) gets the recorded action as a tool call with the thought as content; a text-mode request gets
the recorded raw_output. So one trace replays in either mode.
"""

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

ACTION_STATUSES = ("action_proposed", "loop_detected")


@dataclass(frozen=True)
class ToolCall:
    """A native tool call, with its arguments as the JSON text providers send."""

    name: str
    arguments: str
    id: str = "call_0"


@dataclass(frozen=True)
class Reply:
    """A scripted answer: content and tool calls, how it ends, and how it streams."""

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    finish_reason: str = ""  # "" means "tool_calls" when there are tool calls, else "stop"
    cached_tokens: int | None = 0  # None: the usage names no cached tokens (llama.cpp's servers)
    delay_s: float = 0.0  # wait this long before answering (a slow provider)
    chunk_chars: int = 8  # streaming: characters of content per chunk
    chunk_delay_s: float = 0.0  # streaming: pause before each chunk
    cut_after_chunks: int | None = None  # streaming: drop the connection after this many chunks
    usage_chunk: bool = True  # streaming: send the usage chunk when asked (False: a provider that never does)
    completion_tokens: int | None = None  # the count to report (default: its characters / 4)
    prompt_tokens: int | None = None  # the prompt's count to report (default: its characters / 4)
    streams: bool = True  # False: a stream request gets a 200 stream that ends with no chunk at all

    @property
    def ending(self) -> str:
        """The finish_reason the answer reports."""
        return self.finish_reason or ("tool_calls" if self.tool_calls else "stop")


@dataclass(frozen=True)
class Fault:
    """A scripted failure: answer with `status`, or wait `delay_s` before the next item."""

    status: int = 0
    delay_s: float = 0.0
    message: str = "scripted fault"
    retry_after: str | None = None  # the Retry-After header to send with the status
    sticky: bool = False  # answer every later request with it (a run that ended in it: retries meet it too)


@dataclass(frozen=True)
class Recorded:
    """A recorded react_step response, answered in the form the request asks for."""

    response: dict[str, Any] = field(default_factory=dict)

    def reply_for(self, native: bool) -> Reply:
        """Native requests get the action as a tool call; text requests get raw_output."""
        response = self.response
        finish = "length" if response.get("status") == "truncated_output" else ""
        action = response.get("action_details")
        if native and action and response.get("status") in ACTION_STATUSES:
            arguments = json.dumps(action["tool_args"], ensure_ascii=False)
            call = ToolCall(action["tool_name"], arguments)
            return Reply(text=response.get("thought", ""), tool_calls=(call,), finish_reason=finish)
        return Reply(text=response.get("raw_output", ""), finish_reason=finish)


ScriptItem = str | Reply | Fault | Recorded


def as_reply(item: str | Reply | Recorded, native: bool) -> Reply:
    """The Reply a script item gives for a request in native or text form."""
    if isinstance(item, Recorded):
        return item.reply_for(native)
    return Reply(text=item) if isinstance(item, str) else item


def usage_body(reply: Reply, prompt_chars: int) -> dict[str, Any]:
    """Token counts as characters / 4, deterministically."""
    completion_chars = len(reply.text) + sum(len(c.name) + len(c.arguments) for c in reply.tool_calls)
    prompt_tokens = prompt_chars // 4 if reply.prompt_tokens is None else reply.prompt_tokens
    completion_tokens = completion_chars // 4 if reply.completion_tokens is None else reply.completion_tokens
    usage: dict[str, Any] = {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }
    if reply.cached_tokens is not None:
        usage["prompt_tokens_details"] = {"cached_tokens": reply.cached_tokens}
    return usage


def completion_body(model: str, reply: Reply, prompt_chars: int) -> dict[str, Any]:
    """An OpenAI chat.completion body."""
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
    if reply.tool_calls:
        message["tool_calls"] = [_tool_call(call) for call in reply.tool_calls]
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": reply.ending}],
        "usage": usage_body(reply, prompt_chars),
    }


def stream_chunks(model: str, reply: Reply, prompt_chars: int, include_usage: bool) -> Iterator[str]:
    """The `data:` payloads of an OpenAI chat.completion.chunk stream, ending with [DONE]."""
    yield _chunk(model, {"role": "assistant", "content": ""})
    step = max(reply.chunk_chars, 1)
    for start in range(0, len(reply.text), step):
        yield _chunk(model, {"content": reply.text[start : start + step]})
    for index, call in enumerate(reply.tool_calls):
        opening = {"index": index, "id": call.id, "type": "function"}
        yield _chunk(model, {"tool_calls": [{**opening, "function": {"name": call.name, "arguments": ""}}]})
        for start in range(0, len(call.arguments), step):
            piece = {"index": index, "function": {"arguments": call.arguments[start : start + step]}}
            yield _chunk(model, {"tool_calls": [piece]})
    yield _chunk(model, {}, reply.ending)
    if include_usage and reply.usage_chunk:
        body = {**_chunk_envelope(model), "choices": [], "usage": usage_body(reply, prompt_chars)}
        yield json.dumps(body)
    yield "[DONE]"


def _tool_call(call: ToolCall) -> dict[str, Any]:
    return {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": call.arguments}}


def _chunk_envelope(model: str) -> dict[str, Any]:
    return {"id": "chatcmpl-scripted", "object": "chat.completion.chunk", "created": 0, "model": model}


def _chunk(model: str, delta: dict[str, Any], finish_reason: str | None = None) -> str:
    choice = {"index": 0, "delta": delta, "finish_reason": finish_reason}
    return json.dumps({**_chunk_envelope(model), "choices": [choice]})
