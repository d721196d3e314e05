"""The tools' errors: their branch of the one tree (its root and families in contract/errors.py).

ToolError (500, internal_error)       the model can fix it: the registry makes it an observation with
│                                     is_error true; one that reaches an HTTP answer is a bug
├── UnsafePath (422, invalid_path)    a path that would leave the project (also a ValidationFailed)
├── ProjectNotFound (404, project_not_found)          a project id that names no project
├── VersionNotKept (404, version_not_found)           bytes past the retention window
├── StaleFile (409, conflict)         a conditional write found the file changed since its preview
├── WriteBusy (409, conflict)         another writer held the file for longer than a write may wait
├── ApprovalRefused                   an approval token that is altered, expired or for another call
└── InvalidRegex                      a pattern RE2 cannot compile
BackEndFailure (an UpstreamError)     a back-end failed; the answer names it, str() keeps its own words
├── StoreUnavailable (503, storage_unavailable)       the object store
├── VectorStoreUnavailable (503, vector_store_unavailable)
└── EmbeddingError (502, embedding_failed)            the embedding model, or its input
    ├── ModelMissing                                  a local model whose package is not installed
    └── AdapterMismatch                               a LoRA adapter that does not fit the model
VectorStoreError (500, internal_error)                our own misuse: unknown collection, wrong dimension
"""

from typing import ClassVar

from reactstep.contract.errors import Conflict, NotFound, ServiceError, UpstreamError, ValidationFailed


class ToolError(ServiceError):
    """A failure the model can read and recover from."""


class UnsafePath(ToolError, ValidationFailed):
    """A path from the model or a request that is not a plain relative path inside the project."""

    status = 422
    code = "invalid_path"


class StaleFile(ToolError, Conflict):
    """A conditional write found the file other than the preview saw it; nothing was written."""

    status = 409
    code = "conflict"

    def __init__(self, path: str) -> None:
        super().__init__(
            f"{path} changed since the preview, so nothing was written. Propose the change again "
            "to get a fresh preview for the user to approve."
        )
        self.path = path


class WriteBusy(ToolError, Conflict):
    """Another request kept writing the file for longer than a write waits; nothing was written."""

    status = 409
    code = "conflict"

    def __init__(self, path: str) -> None:
        super().__init__(f"another write to {path} is in progress, so nothing was written; try again")
        self.path = path


class VersionNotKept(ToolError, NotFound):
    """A version of a file whose bytes are not kept: past the retention window, or never kept."""

    status = 404
    code = "version_not_found"

    def __init__(self, path: str, version: int) -> None:
        super().__init__(f"version {version} of {path} is not kept (past the retention window)")
        self.path = path
        self.version = version


class ApprovalRefused(ToolError):
    """An approval token that is altered, expired or issued for another call; nothing was written."""


class InvalidRegex(ToolError):
    """RE2 refused the pattern; `reason` is its own words, with the pattern as the caller gave it."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class ProjectNotFound(ToolError, NotFound):
    """A project id that names no project: never created, or deleted."""

    status = 404
    code = "project_not_found"

    def __init__(self, project_id: str) -> None:
        super().__init__(
            f"project {project_id!r} does not exist; create it with PUT /api/projects/{project_id}"
        )
        self.project_id = project_id


class BackEndFailure(UpstreamError):
    """A back-end failed: str() is what it said (for logs and /readyz), the answer's message names it."""

    failing: ClassVar[str] = "a back-end failed"

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.message = f"{self.failing}: {reason}"


class StoreUnavailable(BackEndFailure):
    """The object store could not be reached or answered with a server error."""

    status = 503
    code = "storage_unavailable"
    failing = "object storage is unavailable"


class VectorStoreUnavailable(BackEndFailure):
    """The vector store cannot be reached, failed, or is held by another process."""

    status = 503
    code = "vector_store_unavailable"
    failing = "the vector store is unavailable"


class VectorStoreError(ServiceError):
    """A usage error: an unknown collection, a wrong dimension, a malformed point."""


class EmbeddingError(BackEndFailure):
    """The embedding model failed, is not installed, or could not use the input; safe to show."""

    status = 502
    code = "embedding_failed"
    failing = "the embedding model failed"


class ModelMissing(EmbeddingError):
    """The package that ships a model's weights is not installed; the message says what to install."""


class AdapterMismatch(EmbeddingError):
    """A LoRA adapter whose weights do not fit the model they are applied to."""
