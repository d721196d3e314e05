"""POST /api/projects/{project_id}/sync: the client's manifest, and the plan that answers it."""

from typing import Annotated

from pydantic import Field, StringConstraints

from reactstep.contract.common import (
    FILE_PATH_SCHEMA,
    EmbeddingModelConfig,
    Integer,
    StrictModel,
    UserApiKeys,
    WireModel,
    at_most,
)
from reactstep.contract.indexing import IndexResponse

Sha256 = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$")]
# The files of one manifest: a large monorepo's (the Linux kernel has ~90,000); its JSON is ~10-16 MB,
# what REACTSTEP_MAX_BODY_BYTES's default holds.
MAX_MANIFEST_FILES = 100_000


class SyncRequest(StrictModel):
    """POST /api/projects/{project_id}/sync."""

    # The server's own path rules refuse a key (422 invalid_path, naming it); the pattern says them.
    files: Annotated[dict[str, Sha256], at_most(MAX_MANIFEST_FILES)] = Field(
        max_length=MAX_MANIFEST_FILES, fail_fast=True, json_schema_extra={"propertyNames": FILE_PATH_SCHEMA}
    )
    """Every file of the client's workspace, canonical relative path -> sha256 hex; at most 100,000."""
    base_version: Annotated[Integer, Field(ge=0)] | None = None
    """The version of the client's last sync; null the first time."""
    apply_deletes: bool = False
    """Delete the files the server holds and the manifest lacks (never implicitly)."""
    index: bool = False
    """Bring the search index up to date before answering. The uploads this sync asks for are then indexed
    as each arrives: a PUT or DELETE of a file of an indexed project re-indexes that file before it
    answers.
    """
    embedding_model_config: EmbeddingModelConfig | None = None
    user_api_keys: UserApiKeys = Field(default_factory=UserApiKeys)


class SyncConflict(WireModel):
    """A path whose current bytes a tool wrote after base_version, where the client holds other
    bytes: what a plugin needs for a 3-way merge (base, the client's, the server's), and the
    ETag that overrides the tool's change on purpose.
    """

    path: str
    version: int
    """The version of the tool's change."""
    sha256: str | None
    """The sha256 of the server's current bytes; null when the tool deleted the path."""
    etag: str | None
    """The ETag of the server's current bytes: PUT or DELETE with `If-Match` set to it replaces the tool's
    change on purpose. Null when the tool deleted the path (override with `If-None-Match: *`).
    """
    base_sha256: str | None = None
    """The sha256 the path had at the client's base_version (null when it did not exist then, or the server
    does not know).
    """


class SyncResponse(WireModel):
    """What the client must upload, what the server would delete (or did), and what to fetch first."""

    version: int
    """The client's next base_version. Without conflicts it is head_version: every tool write up to it was
    compared with the manifest (this sync's own deletes come after it). With conflicts it is one before
    the earliest conflict's `version`, so the next sync reports the same conflicts until each is fetched
    or overridden; PUT and DELETE with it as base_version are refused (409) on a conflicting path unless
    If-Match names its etag.
    """
    head_version: int
    """The project's version the plan was made at (read before the files and the tool changes): where the
    project stands.
    """
    upload: list[str]
    etags: dict[str, str | None]
    """Per upload path, the If-Match for its PUT; null means If-None-Match '*'."""
    delete: list[str]
    deleted: list[str]
    conflicts: list[SyncConflict]
    index: IndexResponse | None = None
