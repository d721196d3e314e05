"""A provider's failure, as litellm raises it, turned into our error tree once: class, status, retry hint.

Never the key: the message is scrubbed of the key the call used before it is kept.
"""

from pydantic import SecretStr

from reactstep.service.errors import (
    LLMAuthFailed,
    LLMBadResponse,
    LLMRateLimited,
    LLMTimeout,
    LLMUnavailable,
    UpstreamError,
)


def translate_error(exc: Exception, api_key: SecretStr | None) -> UpstreamError:
    """Map a litellm/provider exception to our error tree, with a message free of the key."""
    error = _classify(exc, _scrub(str(getattr(exc, "message", exc)), api_key)[:300])
    error.retry_after_s = _retry_after(exc)
    return error


def _classify(exc: Exception, detail: str) -> UpstreamError:
    name = type(exc).__name__
    status = getattr(exc, "status_code", None)
    if name in ("AuthenticationError", "PermissionDeniedError") or status in (401, 403):
        return LLMAuthFailed(f"the LLM provider refused the API key (HTTP {status})")
    if name == "RateLimitError" or status == 429:
        return LLMRateLimited("the LLM provider is rate limiting requests (HTTP 429)")
    if name in ("Timeout", "APITimeoutError") or status == 408:
        return LLMTimeout("the LLM did not answer before the deadline")
    if name == "MidStreamFallbackError":
        return LLMUnavailable("the LLM stream broke off before its end")
    if name in ("APIConnectionError", "ServiceUnavailableError", "InternalServerError") or (
        isinstance(status, int) and status >= 500
    ):
        return LLMUnavailable(f"the LLM provider is unavailable (HTTP {status}): {detail}")
    return LLMBadResponse(f"the LLM provider rejected the call (HTTP {status}): {detail}")


def _retry_after(exc: Exception) -> float | None:
    headers = getattr(exc, "litellm_response_headers", None) or {}
    try:
        seconds = float(headers.get("retry-after", ""))
    except (AttributeError, TypeError, ValueError):
        return None  # absent, or an HTTP date: fall back to our own backoff
    return seconds if seconds >= 0 else None


def _scrub(text: str, api_key: SecretStr | None) -> str:
    if api_key is not None and (secret := api_key.get_secret_value()):
        text = text.replace(secret, "[redacted]")
    return text
