"""The service's errors, the leaves of the one tree (its root and families in contract/errors.py,
the tools' branch in tools/errors.py), and the one renderer of every error answer.

    ServiceError (500, internal_error)                    contract
    ├── BadRequest (400, bad_request; invalid_digest, digest_mismatch, invalid_idempotency_key)   contract
    │   ├── InvalidJSON (400, invalid_json)
    │   ├── JSONTooDeep (400, json_too_deep)
    │   ├── ContextWindowExceeded (400, context_window_exceeded)
    │   ├── RequestTimeout (408, request_timeout)
    │   ├── PayloadTooLarge (413, payload_too_large)
    │   └── ValidationFailed (422, validation_failed; max_tokens_too_large, idempotency_key_reused)  contract
    │       ├── HistoryTooLong (422, history_too_long)
    │       └── UnsafePath (422, invalid_path)            tools
    ├── Unauthorized (401, unauthorized)                  with its WWW-Authenticate challenge
    ├── Forbidden (403; forbidden_project, forbidden_origin, api_base_not_allowed, provider_not_allowed)
    │                                                     well formed, refused by the server's policy
    ├── NotFound (404, not_found; file_not_found, version_not_found, step_not_found)   contract; also an
    │                                                     unknown route
    │   ├── VersionNotKept (404, version_not_found)       tools
    │   ├── StepLost (404, step_lost)                     its replica stopped before it finished
    │   └── ProjectNotFound (404, project_not_found)      tools
    ├── MethodNotAllowed (405, method_not_allowed)        a known path, another method (with Allow)
    ├── Conflict (409, conflict; name_collision, step_running_elsewhere)   contract; tools' StaleFile and
    │                                                     WriteBusy too
    │   ├── IndexStopped (409, index_stopped)             the run was stopped (DELETE .../index)
    │   └── IdempotencyKeyInFlight (409, idempotency_key_in_flight)   with Retry-After
    ├── PreconditionFailed (412, precondition_failed)     with the file's ETag
    ├── OverLimit (429)                                   a service key's limit; with Retry-After
    │   ├── BudgetExhausted (429, budget_exhausted)       tokens or dollars per day
    │   └── RateLimited (429, rate_limited)               requests per minute
    ├── Overloaded (503, overloaded)                      with Retry-After
    ├── ClientClosedRequest (499, client_closed_request)  logged and counted only: nobody reads it
    └── UpstreamError (502, upstream_error)               contract; Retry-After when the provider said
        ├── LLMAuthFailed (502, llm_auth_failed)
        ├── LLMBadResponse (502, llm_bad_response)
        │   └── EmptyStream (502, llm_bad_response)   a 200 stream closed with no chunk
        ├── LLMRateLimited (503, llm_rate_limited)
        ├── LLMUnavailable (503, llm_unavailable)
        ├── LLMTimeout (504, llm_timeout)
        ├── EmbeddingUnavailable (503, embedding_unavailable)
        └── StoreUnavailable (503, storage_unavailable), VectorStoreUnavailable (503,
            vector_store_unavailable), EmbeddingError (502, embedding_failed)         tools

Tool failures the model can fix (tools' ToolError) are observations with is_error true, not answers.
Every error body is written by error_body (a response: error_response; an SSE event:
step/stream.py's error_event): the code, the message with known secrets scrubbed, the details,
and the id of the request it answers.
"""

from typing import Any

from starlette.responses import JSONResponse

# The families both branches subclass live in contract/errors.py; the service names them here, beside
# its own leaves, so one import gives a service module every error it raises.
from reactstep.contract.errors import BadRequest as BadRequest
from reactstep.contract.errors import Conflict as Conflict
from reactstep.contract.errors import NotFound as NotFound
from reactstep.contract.errors import ServiceError as ServiceError
from reactstep.contract.errors import UpstreamError as UpstreamError
from reactstep.contract.errors import ValidationFailed as ValidationFailed
from reactstep.service.logs import context as logs
from reactstep.service.redaction import scrub

INTERNAL_ERROR = "internal error; see the server log"  # a bug's answer: its cause is for the log


def error_body(error: ServiceError) -> dict[str, Any]:
    """Every error body the service sends, in a response or an event: the code, the message with
    known secrets scrubbed, and the id of the request it answers (when serving one), so a client's
    report finds the server's log lines. The code is noted for the request's log line."""
    body: dict[str, Any] = {"code": error.code, "message": scrub(error.message)}
    if error.details is not None:
        body["details"] = error.details
    if (request_id := logs.current_request_id()) is not None:
        body["request_id"] = request_id
        logs.note(error=error.code)
    return {"error": body}


def error_response(error: ServiceError) -> JSONResponse:
    """An error's HTTP answer: its status, its body and its headers (Retry-After, ETag, ...)."""
    return JSONResponse(error_body(error), status_code=error.status, headers=error.headers())


class InvalidJSON(BadRequest):
    code = "invalid_json"


class PayloadTooLarge(BadRequest):
    status = 413
    code = "payload_too_large"


class RequestTimeout(BadRequest):
    status = 408
    code = "request_timeout"


class JSONTooDeep(BadRequest):
    code = "json_too_deep"


class ContextWindowExceeded(BadRequest):
    """A prompt larger than the model's context window even with the whole history left out: not sent."""

    code = "context_window_exceeded"


class HistoryTooLong(ValidationFailed):
    code = "history_too_long"


class Unauthorized(ServiceError):
    status = 401
    code = "unauthorized"

    def headers(self) -> dict[str, str]:
        """The challenge a 401 carries (RFC 9110): how to authenticate."""
        return {"www-authenticate": 'Bearer realm="reactstep"'}


class Forbidden(ServiceError):
    """A well-formed request the server's policy refuses; the code names the rule: a key that may not
    use the project, a browser origin not allowed, an api_base the allowlist does not cover, a model
    whose provider the server does not allow."""

    status = 403
    code = "forbidden_project"
    codes = frozenset({"forbidden_origin", "api_base_not_allowed", "provider_not_allowed"})


class Overloaded(ServiceError):
    """The server is at its limit of requests: answered at once, with when to come back."""

    status = 503
    code = "overloaded"

    def __init__(self, message: str, *, retry_after_s: float) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


class MethodNotAllowed(ServiceError):
    """A known path asked with a method none of its routes answers."""

    status = 405
    code = "method_not_allowed"

    def __init__(self, message: str, *, allowed: list[str]) -> None:
        super().__init__(message)
        self.allowed = allowed

    def headers(self) -> dict[str, str]:
        """Allow names every method the path answers."""
        return {"allow": ", ".join(self.allowed)}


class PreconditionFailed(ServiceError):
    """An If-Match / If-None-Match header that no longer holds; nothing was changed."""

    status = 412
    code = "precondition_failed"

    def __init__(self, message: str, *, etag: str | None = None, details: Any = None) -> None:
        super().__init__(message, details=details)
        self.etag = etag  # the file's current ETag (None: it does not exist)

    def headers(self) -> dict[str, str]:
        """The file's current ETag, so a client need not parse the message to find it."""
        return {} if self.etag is None else {"etag": f'"{self.etag}"'}


class OverLimit(ServiceError):
    """A step the caller's service key may not take now, refused before the model is called; the
    details name the limit (`limit`, `value`) and the Retry-After header says when to come back."""

    status = 429
    code = "over_limit"

    def __init__(self, message: str, *, retry_after_s: float, details: dict[str, Any]) -> None:
        super().__init__(message, details=details)
        self.retry_after_s = retry_after_s


class BudgetExhausted(OverLimit):
    code = "budget_exhausted"


class RateLimited(OverLimit):
    code = "rate_limited"


class LLMAuthFailed(UpstreamError):
    code = "llm_auth_failed"


class LLMBadResponse(UpstreamError):
    code = "llm_bad_response"


class EmptyStream(LLMBadResponse):
    """A stream the provider opened (200) and closed without a chunk: its answer to this call."""


class LLMRateLimited(UpstreamError):
    status = 503
    code = "llm_rate_limited"


class LLMUnavailable(UpstreamError):
    status = 503
    code = "llm_unavailable"


class LLMTimeout(UpstreamError):
    status = 504
    code = "llm_timeout"


class EmbeddingUnavailable(UpstreamError):
    """A remote embedding model that cannot be reached or answers 5xx (not the step's LLM)."""

    status = 503
    code = "embedding_unavailable"


# Cancellation (http/disconnects.py): what a request its client left is logged and counted as.
class ClientClosedRequest(ServiceError):
    """The client closed the connection before the answer began; its work was cancelled. Nobody reads
    this answer: its status (nginx's 499) and code are for the request's log line and metrics."""

    status = 499
    code = "client_closed_request"

    def __init__(self) -> None:
        super().__init__("the client closed the connection; the request's work was cancelled")


class IndexStopped(Conflict):
    """An index run stopped before its end (DELETE /api/projects/{id}/index): the answer of the run's
    own request, when it waited for it; the index stays consistent, and stale until a run completes it."""

    code = "index_stopped"


# Background steps (service/http/step_records.py): GET /api/agent/steps/{step_id}[/events].
class StepLost(NotFound):
    """The replica running the step stopped before it finished; the step must be taken again."""

    code = "step_lost"


# Idempotency-Key (http/idempotency.py)
class IdempotencyKeyInFlight(Conflict):
    """A key whose first request is still running (on any replica): retry to get its answer."""

    code = "idempotency_key_in_flight"

    def __init__(self, message: str, *, retry_after_s: float) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s
