"""The service's errors, the leaves of the one tree (its root and families in contract/errors.py,
the tools' branch in tools/errors.py), and the one renderer of every error answer.

    ServiceError (500, internal_error)                    contract
    ├── BadRequest (400, bad_request)                     contract
    │   ├── InvalidJSON (400, invalid_json)
    │   ├── JSONTooDeep (400, json_too_deep)
    │   ├── ContextWindowExceeded (400, context_window_exceeded)
    │   ├── InvalidDigest (400, invalid_digest)
    │   ├── DigestMismatch (400, digest_mismatch)
    │   ├── RequestTimeout (408, request_timeout)
    │   ├── PayloadTooLarge (413, payload_too_large)
    │   ├── InvalidIdempotencyKey (400, invalid_idempotency_key)
    │   └── ValidationFailed (422, validation_failed)     contract
    │       ├── IdempotencyKeyReused (422, idempotency_key_reused)
    │       ├── HistoryTooLong (422, history_too_long)
    │       ├── MaxTokensTooLarge (422, max_tokens_too_large)
    │       └── UnsafePath (422, invalid_path)            tools
    ├── Unauthorized (401, unauthorized)                  with its WWW-Authenticate challenge
    ├── ForbiddenProject (403, forbidden_project)
    ├── ForbiddenOrigin (403, forbidden_origin)
    ├── ForbiddenApiBase (403, api_base_not_allowed)      well formed, refused by the server's policy
    ├── ForbiddenProvider (403, provider_not_allowed)
    ├── NotFound (404, not_found)                         contract; also an unknown route
    │   ├── FileNotFound (404, file_not_found)
    │   ├── VersionNotFound (404, version_not_found)      tools' VersionNotKept has its code too
    │   └── ProjectNotFound (404, project_not_found)      tools
    ├── MethodNotAllowed (405, method_not_allowed)        a known path, another method (with Allow)
    ├── Conflict (409, conflict)                          contract; tools' StaleFile and WriteBusy too
    │   ├── NameCollision (409, name_collision)
    │   └── IdempotencyKeyInFlight (409, idempotency_key_in_flight)   with Retry-After
    ├── PreconditionFailed (412, precondition_failed)     with the file's ETag
    ├── Overloaded (503, overloaded)                      with Retry-After
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
from reactstep.service import logs
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


class ForbiddenApiBase(ServiceError):
    """A well-formed request naming an api_base the server's allowlist does not cover."""

    status = 403
    code = "api_base_not_allowed"


class ForbiddenProvider(ServiceError):
    """A well-formed request naming a model whose provider the server does not allow."""

    status = 403
    code = "provider_not_allowed"


class JSONTooDeep(BadRequest):
    code = "json_too_deep"


class ContextWindowExceeded(BadRequest):
    """A prompt larger than the model's context window even with the whole history left out: not sent."""

    code = "context_window_exceeded"


class InvalidDigest(BadRequest):
    """A Content-Digest header that is not an RFC 9530 dictionary of byte sequences."""

    code = "invalid_digest"


class DigestMismatch(BadRequest):
    """The body's digest is not the one its Content-Digest header announced; nothing was stored."""

    code = "digest_mismatch"


class HistoryTooLong(ValidationFailed):
    code = "history_too_long"


class MaxTokensTooLarge(ValidationFailed):
    code = "max_tokens_too_large"


class Unauthorized(ServiceError):
    status = 401
    code = "unauthorized"

    def headers(self) -> dict[str, str]:
        """The challenge a 401 carries (RFC 9110): how to authenticate."""
        return {"www-authenticate": 'Bearer realm="reactstep"'}


class ForbiddenProject(ServiceError):
    status = 403
    code = "forbidden_project"


class ForbiddenOrigin(ServiceError):
    status = 403
    code = "forbidden_origin"


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


class FileNotFound(NotFound):
    code = "file_not_found"


class VersionNotFound(NotFound):
    code = "version_not_found"


class NameCollision(Conflict):
    """A new path that differs from an existing one only by case or Unicode normalisation."""

    code = "name_collision"


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


# Idempotency-Key (http/idempotency.py)


class InvalidIdempotencyKey(BadRequest):
    """An Idempotency-Key header that is not 1 to 255 characters of the allowed set."""

    code = "invalid_idempotency_key"


class IdempotencyKeyReused(ValidationFailed):
    """A key sent again with another request (method, path, query or body): nothing ran."""

    code = "idempotency_key_reused"


class IdempotencyKeyInFlight(Conflict):
    """A key whose first request is still running (on any replica): retry to get its answer."""

    code = "idempotency_key_in_flight"

    def __init__(self, message: str, *, retry_after_s: float) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s
