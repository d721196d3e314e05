"""Errors: the one tree every error of the product belongs to, and the bodies they answer with.

Every error answer is {"error": {code, message, request_id[, details]}}: the class says the code and
the HTTP status, the instance says the message (and details, and headers such as Retry-After).
The tree's root and the families both sides subclass live here, where the service and the tools may
both import them; the leaves live with what raises them (tools/errors.py, service/errors.py):

    ServiceError (500, internal_error)                  a failure of the server itself
    ├── BadRequest (400, bad_request)                   service: invalid_json, json_too_deep, ...
    │   └── ValidationFailed (422, validation_failed)   service: history_too_long, max_tokens_too_large
    │       └── tools UnsafePath (422, invalid_path)
    ├── NotFound (404, not_found)                       service: file_not_found, version_not_found
    │   ├── tools ProjectNotFound (404, project_not_found)
    │   └── tools VersionNotKept (404, version_not_found)
    ├── Conflict (409, conflict)                        service: name_collision
    │   └── tools StaleFile, WriteBusy (409, conflict)
    ├── UpstreamError (502, upstream_error)             service: llm_*, embedding_unavailable
    │   └── tools BackEndFailure: StoreUnavailable (503, storage_unavailable),
    │       VectorStoreUnavailable (503, vector_store_unavailable), EmbeddingError (502, embedding_failed)
    ├── tools ToolError (500, internal_error)           an observation the model reads, never an answer
    │   └── UnsafePath, ProjectNotFound, VersionNotKept, StaleFile, WriteBusy, ApprovalRefused, ...
    ├── tools VectorStoreError (500, internal_error)    our own misuse of the vector store
    └── service: Unauthorized, ForbiddenProject, ..., Overloaded, MethodNotAllowed

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

    status: ClassVar[int] = 500
    code: ClassVar[str] = "internal_error"
    # Seconds a client should wait before trying again (the Retry-After header), when known.
    retry_after_s: float | None = None

    def __init__(self, message: str, *, details: Any = None) -> None:
        super().__init__(message)
        self.message = message  # what the answer says; str() may say less (tools' BackEndFailure)
        self.details = details

    def headers(self) -> dict[str, str]:
        """Headers the answer carries besides the body: Retry-After (whole seconds, rounded up)."""
        if self.retry_after_s is None:
            return {}
        return {"retry-after": str(math.ceil(self.retry_after_s))}


class BadRequest(ServiceError):
    status = 400
    code = "bad_request"


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


class NotFound(ServiceError):
    status = 404
    code = "not_found"


class Conflict(ServiceError):
    """The project changed in a way the request did not expect: fetch, then retry."""

    status = 409
    code = "conflict"


class UpstreamError(ServiceError):
    """A back-end (the LLM, object storage, the vector store, an embedding model) failed."""

    status = 502
    code = "upstream_error"
    # The provider's HTTP status, when it answered with one.
    upstream_status: int | None = None
