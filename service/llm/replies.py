"""What a provider's answer becomes: litellm's response objects read into our plain LLMReply (the step's
interpret.py cuts it to the size a request may send back)."""

from typing import Any

from reactstep.contract.step_report import Usage
from reactstep.service.errors import LLMBadResponse
from reactstep.service.llm.protocol import LLMReply, NativeToolCall


def delta_text(chunk: Any) -> str:
    """The text a stream chunk adds ("" for none)."""
    choices = getattr(chunk, "choices", None) or []
    delta = getattr(choices[0], "delta", None) if choices else None
    return str(getattr(delta, "content", None) or "")


def reply_from(response: Any, elapsed_ms: float, stop_dropped: bool) -> LLMReply:
    """The reply in a litellm ModelResponse; LLMBadResponse when it holds no choice."""
    try:
        choice = response.choices[0]
        message = choice.message
        calls = tuple(
            NativeToolCall(call.function.name or "", call.function.arguments or "")
            for call in message.tool_calls or ()
        )
        text = _with_reasoning(message.content or "", getattr(message, "reasoning_content", None))
    except (AttributeError, IndexError, TypeError) as exc:
        raise LLMBadResponse("the LLM returned no choices") from exc
    return LLMReply(
        text=text,
        usage=usage_from(getattr(response, "usage", None)),
        finish_reason=choice.finish_reason,
        elapsed_ms=elapsed_ms,
        tool_calls=calls,
        stop_dropped=stop_dropped,
    )


def _with_reasoning(text: str, reasoning: Any) -> str:
    """The reply as the model wrote it: litellm moves a leading <think> block (even an empty one) to
    reasoning_content, and the parser makes the thought of it."""
    if not isinstance(reasoning, str):
        return text
    return f"<think>{reasoning}</think>{text}"


def usage_from(raw: Any) -> Usage:
    """Token counts, with the cached prompt tokens under either name providers give them (None when the
    provider gives neither: unknown, not 0)."""
    details = getattr(raw, "prompt_tokens_details", None)
    cached = getattr(details, "cached_tokens", None)
    if cached is None:
        cached = getattr(raw, "cache_read_input_tokens", None)
    return Usage(
        prompt_tokens=getattr(raw, "prompt_tokens", 0) or 0,
        completion_tokens=getattr(raw, "completion_tokens", 0) or 0,
        total_tokens=getattr(raw, "total_tokens", 0) or 0,
        cached_tokens=cached if isinstance(cached, int) else None,
    )
