"""A project's report, a stored file, and the change feed (GET /api/projects/{project_id}/changes)."""

from typing import Annotated, Any, Literal

from pydantic import PlainValidator

from reactstep.contract.common import WireModel
from reactstep.contract.indexing import IndexJob

IndexState = Literal["ready", "stale", "indexing"]


def _as_given(value: Any) -> Any:
    """The project head's job record, passed on as it is (its JSON is an IndexJob)."""
    return value


class ProjectReport(WireModel):
    """A project's files, indexed chunks, versions and index state."""

    project_id: str
    files: int
    bytes: int
    chunks: int
    """Chunks the default embedding model's collection holds for the project."""
    version: int
    """How many changes the project has had (uploads, deletes, approved writes)."""
    indexed_version: int
    """The version the search index describes."""
    index_state: IndexState
    indexing: Annotated[
        dict[str, Any] | None, PlainValidator(_as_given, json_schema_input_type=IndexJob | None)
    ] = None
    created: float
    """When this incarnation of the project was created (Unix seconds). A project deleted and
    created again has another value, so a client's sync state can tell the two apart.
    """


class StoredFile(WireModel):
    """What a PUT or DELETE of one file did."""

    path: str
    size: int
    etag: str | None
    """The file's ETag (hex MD5 of its bytes); null after a delete."""
    sha256: str | None
    version: int
    """The project's version after this change."""
    changed: bool
    """False when the file already held these bytes (the version did not move)."""
    index_state: IndexState | None = None
    """The project's index state after this change. A change of a project indexed before is re-indexed
    before the answer, so `ready` says code_search, find_definition and find_importers already see it;
    `stale` when the project was never indexed or the re-index failed (the change is stored either way;
    POST .../index repairs the index). Null when nothing changed.
    """


class ChangeItem(WireModel):
    """One entry of the change feed."""

    version: int
    path: str
    sha256: str | None
    """The bytes' sha256 after the change; null when the file was deleted."""
    origin: Literal["sync", "tool"]
    url: str | None = None
    """Where GET reads the bytes this change wrote (`/api/projects/{id}/files/{path}?version=N`,
    the path percent-encoded); null for a delete.
    """


class ChangesResponse(WireModel):
    """GET /api/projects/{project_id}/changes: the project's version and every change after `since`."""

    version: int
    changes: list[ChangeItem]
