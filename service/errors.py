"""Errors as named data: each carries an HTTP status and a stable code.

    ServiceError (500, internal_error)
    ├── BadRequest (400, bad_request)
    │   ├── InvalidJSON (400, invalid_json)
    │   ├── JSONTooDeep (400, json_too_deep)
    │   ├── ContextWindowExceeded (400, context_window_exceeded)
    │   ├── InvalidDigest (400, invalid_digest)
    │   ├── DigestMismatch (400, digest_mismatch)
    │   ├── ValidationFailed (422, validation_failed)
    │   │   ├── HistoryTooLong (422, history_too_long)
    │   │   ├── MaxTokensTooLarge (422, max_tokens_too_large)
    │   │   └── InvalidPath (422, invalid_path)
    │   └── PayloadTooLarge (413, payload_too_large)
    ├── Unauthorized (401, unauthorized)
    ├── ForbiddenProject (403, forbidden_project)
    ├── ForbiddenOrigin (403, forbidden_origin)
    ├── ForbiddenApiBase (403, api_base_not_allowed)    well formed, refused by the server's policy
    ├── ForbiddenProvider (403, provider_not_allowed)
    ├── NotFound (404, not_found)
    │   ├── UnknownProject (404, project_not_found)
    │   ├── FileNotFound (404, file_not_found)
    │   └── VersionNotFound (404, version_not_found)
    ├── Conflict (409, conflict)
    │   └── NameCollision (409, name_collision)
    ├── PreconditionFailed (412, precondition_failed)
    ├── Overloaded (503, overloaded)
    └── UpstreamError (502, upstream_error)
        ├── LLMAuthFailed (502, llm_auth_failed)
        ├── LLMBadResponse (502, llm_bad_response)
        ├── LLMRateLimited (503, llm_rate_limited)
        ├── LLMUnavailable (503, llm_unavailable)
        ├── LLMTimeout (504, llm_timeout)
        ├── StorageUnavailable (503, storage_unavailable)
        ├── VectorStoreUnavailable (503, vector_store_unavailable)
        ├── EmbeddingUnavailable (503, embedding_unavailable)
        └── EmbeddingFailed (502, embedding_failed)

Tool failures the model can fix are not errors here: they are observations with is_error true.
"""

import math
from typing import Any, ClassVar

from reactstep.service import logs as request_context
from reactstep.service.redaction import scrub


class ServiceError(Exception):
    """A failure with an HTTP status and a stable machine-readable code."""

    status: ClassVar[int] = 500
    code: ClassVar[str] = "internal_error"

    def __init__(self, message: str, *, details: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.details = details

    def headers(self) -> dict[str, str]:
        """Headers the answer carries besides the body (none, unless a subclass says)."""
        return {}

    def to_body(self) -> dict[str, Any]:
        """The JSON error body: {error: {code, message[, details], request_id}}."""
        return error_body(self.code, self.message, self.details)


def error_body(code: str, message: str, details: Any = None) -> dict[str, Any]:
    """Every error body the service sends, in a response or an event: the code, the message with
    known secrets scrubbed, and the id of the request it answers (when serving one), so a client's
    report finds the server's log lines. The code is noted for the request's log line."""
    error: dict[str, Any] = {"code": code, "message": scrub(message)}
    if details is not None:
        error["details"] = details
    if (request_id := request_context.current_request_id()) is not None:
        error["request_id"] = request_id
        request_context.note(error=code)
    return {"error": error}


class BadRequest(ServiceError):
    status = 400
    code = "bad_request"


class InvalidJSON(BadRequest):
    code = "invalid_json"


class ValidationFailed(BadRequest):
    status = 422
    code = "validation_failed"

    @classmethod
    def naming(cls, details: list[dict[str, str]], total: int | None = None) -> "ValidationFailed":
        """A 422 for fields that do not match the schema, its message naming each (a client that
        shows only the message, as the CLI does, still says what to fix); `total`: the problems
        found, when `details` holds only the first of them."""
        more = f" (the first {len(details)} of {total} problems)" if total and total > len(details) else ""
        named = "; ".join(f"{detail['field']}: {detail['message']}" for detail in details)
        return cls(f"the request body does not match the schema{more}: {named}", details=details)


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


class ForbiddenProject(ServiceError):
    status = 403
    code = "forbidden_project"


class ForbiddenOrigin(ServiceError):
    status = 403
    code = "forbidden_origin"


class Overloaded(ServiceError):
    status = 503
    code = "overloaded"


class NotFound(ServiceError):
    status = 404
    code = "not_found"


class UnknownProject(NotFound):
    code = "project_not_found"


class FileNotFound(NotFound):
    code = "file_not_found"


class VersionNotFound(NotFound):
    code = "version_not_found"


class InvalidPath(ValidationFailed):
    code = "invalid_path"


class Conflict(ServiceError):
    """The project changed in a way the request did not expect: fetch, then retry."""

    status = 409
    code = "conflict"


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


class UpstreamError(ServiceError):
    status = 502
    code = "upstream_error"
    # Seconds the provider asked us to wait (its Retry-After header), when it said.
    retry_after_s: float | None = None
    # The provider's HTTP status, when it answered with one.
    upstream_status: int | None = None

    def headers(self) -> dict[str, str]:
        """The provider's Retry-After, passed on (whole seconds, rounded up), when it sent one."""
        if self.retry_after_s is None:
            return {}
        return {"retry-after": str(math.ceil(self.retry_after_s))}


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


class StorageUnavailable(UpstreamError):
    status = 503
    code = "storage_unavailable"


class VectorStoreUnavailable(UpstreamError):
    status = 503
    code = "vector_store_unavailable"


class EmbeddingUnavailable(UpstreamError):
    """A remote embedding model that cannot be reached or answers 5xx (not the step's LLM)."""

    status = 503
    code = "embedding_unavailable"


class EmbeddingFailed(UpstreamError):
    code = "embedding_failed"
