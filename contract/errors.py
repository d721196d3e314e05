"""Error bodies: every error answer is {"error": {code, message, request_id[, details]}}."""

from typing import Annotated, Any, Literal, get_args

from pydantic import ConfigDict, StringConstraints

from reactstep.contract.common import WireModel, nulls_left_out

# The codes a 422 carries (the server's ValidationFailed and its kinds).
ValidationCode = Literal["validation_failed", "history_too_long", "max_tokens_too_large", "invalid_path"]
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
