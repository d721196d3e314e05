"""The LLM gateway: the only module that imports litellm, and the one place its errors become ours."""

import os
import time
from dataclasses import dataclass, field
from typing import Any, Protocol

from pydantic import SecretStr

from service.errors import (
    LLMAuthFailed,
    LLMBadResponse,
    LLMRateLimited,
    LLMTimeout,
    LLMUnavailable,
    UpstreamError,
)
from service.schemas import Usage


@dataclass(frozen=True)
class LLMRequest:
    """One chat completion call, fully resolved (model, base, key, limits)."""

    model: str
    messages: list[dict[str, str]]
    temperature: float
    max_tokens: int
    timeout_s: float
    api_base: str | None = None
    api_key: SecretStr | None = field(default=None, repr=False)
    stop: tuple[str, ...] = ()


@dataclass(frozen=True)
class LLMReply:
    """The model's text and what it cost."""

    text: str
    usage: Usage
    finish_reason: str | None
    elapsed_ms: float


class LLMGateway(Protocol):
    """Anything that can answer an LLMRequest."""

    async def complete(self, request: LLMRequest) -> LLMReply: ...


class LiteLLMGateway:
    """Calls any litellm model; litellm is imported on first use because its import is slow."""

    async def complete(self, request: LLMRequest) -> LLMReply:
        """Send the request; translate every provider failure to an UpstreamError."""
        litellm = _import_litellm()
        started = time.perf_counter()
        try:
            response = await litellm.acompletion(**_call_arguments(request))
        except Exception as exc:
            raise translate_error(exc, request.api_key) from exc
        elapsed_ms = (time.perf_counter() - started) * 1000
        return _reply_from(response, elapsed_ms)


def _import_litellm() -> Any:
    # Without this, importing litellm fetches a model price map over the network.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    litellm.telemetry = False
    litellm.suppress_debug_info = True
    litellm.drop_params = True
    return litellm


def _call_arguments(request: LLMRequest) -> dict[str, Any]:
    arguments: dict[str, Any] = {
        "model": request.model,
        "messages": request.messages,
        "temperature": request.temperature,
        "max_tokens": request.max_tokens,
        "timeout": request.timeout_s,
        "num_retries": 0,
        "max_retries": 0,
    }
    if request.api_base:
        arguments["api_base"] = request.api_base
    # Local OpenAI-compatible servers often need no key; litellm still wants one.
    arguments["api_key"] = request.api_key.get_secret_value() if request.api_key else "none"
    if request.stop:
        arguments["stop"] = list(request.stop)
    return arguments


def _reply_from(response: Any, elapsed_ms: float) -> LLMReply:
    try:
        choice = response.choices[0]
        text = choice.message.content or ""
        finish_reason = choice.finish_reason
    except (AttributeError, IndexError, TypeError) as exc:
        raise LLMBadResponse("the LLM returned no choices") from exc
    raw_usage = getattr(response, "usage", None)
    usage = Usage(
        prompt_tokens=getattr(raw_usage, "prompt_tokens", 0) or 0,
        completion_tokens=getattr(raw_usage, "completion_tokens", 0) or 0,
        total_tokens=getattr(raw_usage, "total_tokens", 0) or 0,
    )
    return LLMReply(text=text, usage=usage, finish_reason=finish_reason, elapsed_ms=elapsed_ms)


def translate_error(exc: Exception, api_key: SecretStr | None) -> UpstreamError:
    """Map a litellm/provider exception to our error tree, with a message free of the key."""
    name = type(exc).__name__
    status = getattr(exc, "status_code", None)
    detail = _scrub(str(getattr(exc, "message", exc)), api_key)[:300]
    if name in ("AuthenticationError", "PermissionDeniedError") or status in (401, 403):
        return LLMAuthFailed(f"the LLM provider refused the API key (HTTP {status})")
    if name == "RateLimitError" or status == 429:
        return LLMRateLimited("the LLM provider is rate limiting requests (HTTP 429)")
    if name in ("Timeout", "APITimeoutError") or status == 408:
        return LLMTimeout("the LLM did not answer before the deadline")
    if name in ("APIConnectionError", "ServiceUnavailableError", "InternalServerError") or (
        isinstance(status, int) and status >= 500
    ):
        return LLMUnavailable(f"the LLM provider is unavailable (HTTP {status}): {detail}")
    return LLMBadResponse(f"the LLM provider rejected the call (HTTP {status}): {detail}")


def _scrub(text: str, api_key: SecretStr | None) -> str:
    if api_key is not None and (secret := api_key.get_secret_value()):
        text = text.replace(secret, "[redacted]")
    return text
