"""A provider's failure, as litellm raises it, turned into our error tree once: class, status, retry hint.

Never the key: the message is scrubbed of the key the call used before it is kept. An error body in
the usual JSON shapes ({"error": {"message": ...}}, {"error": ...}, {"message": ...}, {"detail": ...})
is cut to its message, as the OpenAI SDK did for the first ones; litellm's own route quotes it whole.
"""

import json
import re

from pydantic import SecretStr

from reactstep.service.errors import (
    LLMAuthFailed,
    LLMBadResponse,
    LLMRateLimited,
    LLMTimeout,
    LLMUnavailable,
    UpstreamError,
)
from reactstep.service.redaction import scrub_secret

_QUOTED_BODY = re.compile(r"(?P<head>(?:.*? - )?)(?P<body>\{.*\})\s*$", re.DOTALL)
# litellm's names for where it failed ("litellm.InternalServerError: InternalServerError: OpenAIException
# - "): its own classes, which say nothing the status does not; the provider's words follow them.
_LITELLM_PREFIX = re.compile(r"^litellm\.\w+: (?:\w+Error: )?(?:\w+Exception(?: - |$))?")


def translate_error(exc: Exception, api_key: SecretStr | None) -> UpstreamError:
    """Map a litellm/provider exception to our error tree, with a message free of the key."""
    error = _classify(exc, _scrub(_readable(str(getattr(exc, "message", exc))), api_key)[:300])
    error.retry_after_s = _retry_after(exc)
    status = getattr(exc, "status_code", None)
    error.upstream_status = status if isinstance(status, int) else None
    return error


def _classify(exc: Exception, said: str) -> UpstreamError:
    name = type(exc).__name__
    status = getattr(exc, "status_code", None)
    detail = f": {said}" if said else " with no message"
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
        return LLMUnavailable(f"the LLM provider is unavailable (HTTP {status}){detail}")
    return LLMBadResponse(f"the LLM provider rejected the call (HTTP {status}){detail}")


def _readable(text: str) -> str:
    """litellm's message with a JSON error body at its end cut to the body's own message."""
    text = _LITELLM_PREFIX.sub("", text)
    quoted = _QUOTED_BODY.match(text)
    if quoted is None:
        return text.removesuffix(" - ")  # an empty body
    try:
        body = json.loads(quoted["body"])
    except ValueError:
        return text
    error = body.get("error", body)
    for message in (error.get("message") if isinstance(error, dict) else error, body.get("detail")):
        if isinstance(message, str):
            return quoted["head"] + message
    return text


def _retry_after(exc: Exception) -> float | None:
    headers = getattr(exc, "litellm_response_headers", None) or {}
    try:
        seconds = float(headers.get("retry-after", ""))
    except (AttributeError, TypeError, ValueError):
        return None  # absent, or an HTTP date: fall back to our own backoff
    return seconds if seconds >= 0 else None


def _scrub(text: str, api_key: SecretStr | None) -> str:
    if api_key is not None and (secret := api_key.get_secret_value()):
        text = scrub_secret(text, secret)  # its escaped pieces too, before the message is cut
    return text
