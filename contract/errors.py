"""Errors: the one tree every error of the product belongs to, and the bodies they answer with.

Every error answer is {"error": {code, message, request_id[, details]}}: the class says the HTTP
status and the code, the instance says the message (and details, and headers such as Retry-After).
Where errors differ only by their code, one class carries them all as data: `codes` lists the others
it may carry, and the raiser names one (`NotFound(message, code="file_not_found")`).
The tree's root and the families both sides subclass live here, where the service and the tools may
both import them; the leaves live with what raises them (tools/errors.py, service/errors.py):

    ServiceError (500, internal_error)                  a failure of the server itself
    ├── BadRequest (400, bad_request; invalid_digest, digest_mismatch)
    │   │                                               service: invalid_json, json_too_deep, ...
    │   └── ValidationFailed (422, validation_failed; max_tokens_too_large)
    │       │                                           service: history_too_long
    │       └── tools UnsafePath (422, invalid_path)
    ├── NotFound (404, not_found; file_not_found, version_not_found)
    │   ├── tools ProjectNotFound (404, project_not_found)
    │   └── tools VersionNotKept (404, version_not_found)
    ├── Conflict (409, conflict; name_collision)
    │   └── tools StaleFile, WriteBusy (409, conflict)
    ├── UpstreamError (502, upstream_error)             service: llm_*, embedding_unavailable
    │   └── tools BackEndFailure: StoreUnavailable (503, storage_unavailable),
    │       VectorStoreUnavailable (503, vector_store_unavailable), EmbeddingError (502, embedding_failed)
    ├── tools ToolError (500, internal_error)           an observation the model reads, never an answer
    │   └── UnsafePath, ProjectNotFound, VersionNotKept, StaleFile, WriteBusy, ApprovalRefused, ...
    ├── tools VectorStoreError (500, internal_error)    our own misuse of the vector store
    └── service: Unauthorized, Forbidden, ..., Overloaded, MethodNotAllowed

docs/http-api.md's table of codes is made from the tree (scripts/api_table.py).
"""

import math
from typing import Annotated, Any, ClassVar, Literal, get_args

from pydantic import ConfigDict, StringConstraints

from reactstep.contract.common import WireModel, nulls_left_out

# The codes a 422 carries (the server's ValidationFailed and its kinds).
ValidationCode = Literal[
    "validation_failed", "history_too_long", "max_tokens_too_large", "invalid_path", "idempotency_key_reused"
]
VALIDATION_CODES: tuple[str, ...] = get_args(ValidationCode)
RequestId = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_.:-]{1,128}$")]


class ErrorDetail(WireModel):
    """What went wrong."""

    model_config = ConfigDict(extra="forbid", json_schema_extra=nulls_left_out)

    code: str
    """Stable and machine-readable; each response lists its codes in x-error-codes."""
    message: str
    """For people; never contains a key."""
    request_id: RequestId
    """The request's id, as in its `X-Request-ID` response header and in every server log line
    about it: quote it when reporting a problem.
    """
    details: Any = None
    """More about the error, when there is more (see ValidationErrorBody)."""


class ErrorBody(WireModel):
    """Every error response."""

    model_config = ConfigDict(extra="forbid")

    error: ErrorDetail


class FieldError(WireModel):
    """One failed field of a 422."""

    model_config = ConfigDict(extra="forbid")

    field: str
    """Dotted path of the field, e.g. `llm_config.temperature`; `body` for the whole body."""
    message: str


class ValidationErrorDetail(ErrorDetail):
    """What went wrong with a request the schema refused."""

    code: ValidationCode
    details: list[FieldError] | None = None


class ValidationErrorBody(WireModel):
    """A 422 body; `details`, when present, lists each failed field."""

    model_config = ConfigDict(extra="forbid")

    error: ValidationErrorDetail


class ServiceError(Exception):
    """The root: a failure with an HTTP status and a stable machine-readable code."""

    status: int = 500
    code: str = "internal_error"
    # The other codes an instance of this very class may carry (with its status), named when raised.
    # A subclass does not inherit them (carried_codes).
    codes: ClassVar[frozenset[str]] = frozenset()
    # Seconds a client should wait before trying again (the Retry-After header), when known.
    retry_after_s: float | None = None

    def __init__(self, message: str, *, details: Any = None, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message  # what the answer says; str() may say less (tools' BackEndFailure)
        self.details = details
        if code is not None:
            if code not in type(self).carried_codes():
                raise ValueError(f"{type(self).__name__} does not carry the code {code!r}")
            self.code = code

    @classmethod
    def carried_codes(cls) -> frozenset[str]:
        """Every code an instance of this very class may carry: its own and the `codes` it declares
        (a subclass declares its own; it does not inherit them)."""
        declared: frozenset[str] = vars(cls).get("codes", frozenset())
        return declared | {cls.code}

    def headers(self) -> dict[str, str]:
        """Headers the answer carries besides the body: Retry-After (whole seconds, rounded up)."""
        if self.retry_after_s is None:
            return {}
        return {"retry-after": str(math.ceil(self.retry_after_s))}


class BadRequest(ServiceError):
    status = 400
    code = "bad_request"
    # a Content-Digest header that is not an RFC 9530 dictionary of byte sequences; a body whose
    # digest is not the one its header announced (nothing was stored); an Idempotency-Key header that
    # is not 1 to 255 characters of the allowed set
    codes = frozenset({"invalid_digest", "digest_mismatch", "invalid_idempotency_key"})


class ValidationFailed(BadRequest):
    status = 422
    code = "validation_failed"
    # idempotency_key_reused: a key sent again with another request (method, path, query or body)
    codes = frozenset({"max_tokens_too_large", "idempotency_key_reused"})

    @classmethod
    def naming(cls, details: list[dict[str, str]], total: int | None = None) -> "ValidationFailed":
        """A 422 for fields that do not match the schema, its message naming each (a client that
        shows only the message, as the CLI does, still says what to fix); `total`: the problems
        found, when `details` holds only the first of them."""
        more = f" (the first {len(details)} of {total} problems)" if total and total > len(details) else ""
        named = "; ".join(f"{detail['field']}: {detail['message']}" for detail in details)
        return cls(f"the request body does not match the schema{more}: {named}", details=details)


class NotFound(ServiceError):
    status = 404
    code = "not_found"
    # step_not_found: a background step never started, another key's, or expired
    codes = frozenset({"file_not_found", "version_not_found", "step_not_found"})


class Conflict(ServiceError):
    """The project changed in a way the request did not expect: fetch, then retry."""

    status = 409
    code = "conflict"
    # name_collision: a new path that differs from an existing one only by case or Unicode
    # normalisation (one file on a case-insensitive disk); step_running_elsewhere: a background
    # step's DELETE on a replica other than the one running it
    codes = frozenset({"name_collision", "step_running_elsewhere"})


class UpstreamError(ServiceError):
    """A back-end (the LLM, object storage, the vector store, an embedding model) failed."""

    status = 502
    code = "upstream_error"
    # The provider's HTTP status, when it answered with one.
    upstream_status: int | None = None
