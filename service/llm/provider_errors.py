"""A provider's failure, as litellm raises it, turned into our error tree once: class, status, retry hint.

A provider that cannot be reached at all (litellm says HTTP 500 for a refused connection) is said to
be so, with the model and the api_base. An embedding provider's failure is classified the same way
but says so: the embedding model, where it was called, and the setting to check; one that cannot be
reached or answers 5xx is embedding_unavailable, so it is never mistaken for the step's LLM.

Never the key: the message is scrubbed of the key the call used before it is kept. An error body in
the usual JSON shapes ({"error": {"message": ...}}, {"error": ...}, {"message": ...}, {"detail": ...})
is cut to its message, as the OpenAI SDK did for the first ones; litellm's own route quotes it whole,
the SDK (which litellm's embeddings still call) as a Python dict.
"""

import ast
import json
import re
from dataclasses import dataclass

from pydantic import SecretStr

from reactstep.service.errors import (
    EmbeddingUnavailable,
    LLMAuthFailed,
    LLMBadResponse,
    LLMRateLimited,
    LLMTimeout,
    LLMUnavailable,
    UpstreamError,
)
from reactstep.service.llm.protocol import LLMRequest
from reactstep.service.redaction import scrub_secret

_QUOTED_BODY = re.compile(r"(?P<head>(?:.*? - )?)(?P<body>\{.*\})\s*$", re.DOTALL)
# litellm's names for where it failed ("litellm.InternalServerError: InternalServerError: OpenAIException
# - ") and the SDK's "Error code: 500 - ": words that say nothing the status does not; the provider's follow.
_LITELLM_PREFIX = re.compile(
    r"^litellm\.\w+: (?:\w+Error: )?(?:\w+Exception(?: - |$))?(?:Error code: \d+ - )?"
)
LITERAL_MAX = 20_000
UNAVAILABLE_NAMES = (
    "MidStreamFallbackError",
    "APIConnectionError",
    "ServiceUnavailableError",
    "InternalServerError",
)  # a provider's error body is a few hundred bytes; a larger one is left as it is


def translate_error(exc: Exception, request: LLMRequest) -> UpstreamError:
    """Map a litellm/provider exception to our error tree, with a message free of the key."""
    if _kind(exc) is LLMUnavailable and (refused := _connection_failure(exc)) is not None:
        where = request.api_base or "its provider's endpoint"
        error: UpstreamError = LLMUnavailable(
            f"the LLM {request.model} at {where} cannot be reached ({_scrub(refused, request.api_key)}); "
            "start its server, or check the api_base (llm_config.api_base or REACTSTEP_LLM_API_BASE)"
        )
    else:  # a status the provider sent (not the 500 litellm names a refused connection with)
        detail = _scrub(_readable(str(getattr(exc, "message", exc))), request.api_key)[:300]
        error = _classify(exc, detail)
        status = getattr(exc, "status_code", None)
        error.upstream_status = status if isinstance(status, int) else None
    error.retry_after_s = _retry_after(exc)
    return error


@dataclass(frozen=True)
class EmbeddingEndpoint:
    """What an embedding call was: its model, where it went, which setting chose that, its timeout."""

    model: str
    api_base: str | None
    api_base_setting: str  # REACTSTEP_EMBEDDING_API_BASE, or the request's embedding_model_config.api_base
    timeout_s: float

    def __str__(self) -> str:
        where = self.api_base or "its provider's endpoint"
        return f"the embedding model {self.model} at {where}"


def translate_embedding_error(
    exc: Exception, api_key: SecretStr | None, endpoint: EmbeddingEndpoint
) -> UpstreamError:
    """Map an embedding call's exception as translate_error does, in words naming the embedding model."""
    detail = _scrub(_readable(str(getattr(exc, "message", exc))), api_key)[:300]
    kind, status = _kind(exc), getattr(exc, "status_code", None)
    error: UpstreamError
    if kind is LLMAuthFailed:
        error = LLMAuthFailed(
            f"{endpoint} refused the API key (HTTP {status}); "
            "check user_api_keys.embeddingKey or REACTSTEP_EMBEDDING_API_KEY"
        )
    elif kind is LLMRateLimited:
        error = LLMRateLimited(f"{endpoint} is rate limiting requests (HTTP 429); retry later")
    elif kind is LLMTimeout:
        error = LLMTimeout(
            f"{endpoint} did not answer within {endpoint.timeout_s:g} s; "
            "a slow model needs a larger REACTSTEP_LLM_TIMEOUT_S"
        )
    elif kind is LLMUnavailable and (refused := _connection_failure(exc)) is not None:
        error = EmbeddingUnavailable(
            f"{endpoint} cannot be reached ({_scrub(refused, api_key)}); "
            f"start its server, or set {endpoint.api_base_setting} to where it runs"
        )
    elif kind is LLMUnavailable:
        error = EmbeddingUnavailable(f"{endpoint} is unavailable (HTTP {status}): {detail}; retry later")
    else:
        error = LLMBadResponse(f"{endpoint} rejected the call (HTTP {status}): {detail}")
    error.retry_after_s = _retry_after(exc)
    return error


def _classify(exc: Exception, said: str) -> UpstreamError:
    kind, status = _kind(exc), getattr(exc, "status_code", None)
    detail = f": {said}" if said else " with no message"
    if kind is LLMAuthFailed:
        return LLMAuthFailed(f"the LLM provider refused the API key (HTTP {status})")
    if kind is LLMRateLimited:
        return LLMRateLimited("the LLM provider is rate limiting requests (HTTP 429)")
    if kind is LLMTimeout:
        return LLMTimeout("the LLM did not answer before the deadline")
    if type(exc).__name__ == "MidStreamFallbackError":
        return LLMUnavailable("the LLM stream broke off before its end")
    if kind is LLMUnavailable:
        return LLMUnavailable(f"the LLM provider is unavailable (HTTP {status}){detail}")
    return LLMBadResponse(f"the LLM provider rejected the call (HTTP {status}){detail}")


def _kind(exc: Exception) -> type[UpstreamError]:
    """Which of our errors a provider's exception is, by litellm's class name or the HTTP status."""
    name = type(exc).__name__
    status = getattr(exc, "status_code", None)
    if name in ("AuthenticationError", "PermissionDeniedError") or status in (401, 403):
        return LLMAuthFailed
    if name == "RateLimitError" or status == 429:
        return LLMRateLimited
    if name in ("Timeout", "APITimeoutError") or status == 408:
        return LLMTimeout
    if name in UNAVAILABLE_NAMES or (isinstance(status, int) and status >= 500):
        return LLMUnavailable
    return LLMBadResponse


def _connection_failure(exc: BaseException) -> str | None:
    """The socket's own words (the innermost OSError) when no connection was made, else None;
    litellm reports that as an HTTP 500 that no server sent."""
    chain: list[BaseException] = []
    cause: BaseException | None = exc
    while cause is not None and cause not in chain:
        chain.append(cause)
        cause = cause.__cause__ or cause.__context__
    failures = [
        str(cause) for cause in chain if isinstance(cause, OSError) and not isinstance(cause, TimeoutError)
    ]
    return failures[-1] if failures else None


def _readable(text: str) -> str:
    """litellm's message with an error body at its end (JSON, or the SDK's dict) cut to its message."""
    text = _LITELLM_PREFIX.sub("", text)
    quoted = _QUOTED_BODY.match(text)
    if quoted is None:
        return text.removesuffix(" - ")  # an empty body
    try:
        body = json.loads(quoted["body"])
    except ValueError:
        try:  # literals only, never code; a body past any error message's size is left as it is
            body = ast.literal_eval(quoted["body"]) if len(quoted["body"]) <= LITERAL_MAX else None
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return text
    if not isinstance(body, dict):
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
