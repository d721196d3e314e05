"""Old versions of a project's files: read one, link the change feed to them, collect garbage.

The bytes live in the store as blobs, and each path's history says which blob it held from which
version on (tools/projects/versioned.py, history.py, gc.py); this module speaks HTTP's terms.
"""

import hashlib
from dataclasses import dataclass
from urllib.parse import quote

from pydantic import BaseModel

from reactstep.service.errors import Conflict, NotFound
from reactstep.service.runtime import Runtime
from reactstep.service.workspace.conflicts import ahead_of_project
from reactstep.service.workspace.projects import require_project
from reactstep.tools.errors import VersionNotKept, WriteBusy
from reactstep.tools.projects.blobs import read_blob
from reactstep.tools.projects.gc import collect_garbage
from reactstep.tools.projects.versioned import sha256_at
from reactstep.tools.store.paths import ProjectPath, file_path


@dataclass(frozen=True)
class VersionBody:
    """The bytes a path held at one version, with their ETag (MD5, as the file's) and sha256."""

    data: bytes
    etag: str
    sha256: str


class GcResponse(BaseModel):
    """POST /api/projects/{project_id}/gc: the blobs deleted (by sha256) and the paths looked at."""

    removed: list[str]
    paths: int


def read_version(project_id: str, raw_path: str, version: int, runtime: Runtime) -> VersionBody:
    """The bytes of the path at `version`: 404 file_not_found (absent then), version_not_found, 409."""
    head = require_project(project_id, runtime)
    path = file_path(raw_path)
    if version > head.version:
        raise Conflict(ahead_of_project(version, project_id, head.version))
    try:
        digest = sha256_at(runtime.store, runtime.projects, project_id, path, version)
    except VersionNotKept as exc:
        raise NotFound(f"{exc}; the project keeps {_kept(runtime)}", code="version_not_found") from exc
    except WriteBusy as exc:
        raise Conflict(f"{exc}; read the version again") from exc
    if digest is None:
        raise NotFound(
            f"{path} did not exist at version {version} of project {project_id!r}", code="file_not_found"
        )
    data = read_blob(runtime.store, project_id, digest)
    if data is None:  # b"" is kept bytes (an empty file), not missing ones
        data = _current_if(project_id, path, digest, runtime)
    if data is None:
        raise NotFound(f"the bytes of {path} at version {version} were not kept", code="version_not_found")
    return VersionBody(data, hashlib.md5(data).hexdigest(), digest)


def base_sha256(project_id: str, path: ProjectPath, version: int, runtime: Runtime) -> str | None:
    """The sha256 of the clean `path` at `version`; None when absent then, not kept, or being written
    for longer than a write waits."""
    try:
        return sha256_at(runtime.store, runtime.projects, project_id, path, version)
    except (VersionNotKept, WriteBusy):
        return None


def version_url(project_id: str, path: str, version: int) -> str:
    """Where GET reads the bytes `path` held at `version`."""
    return f"/api/projects/{quote(project_id, safe='')}/files/{quote(path)}?version={version}"


def collect(project_id: str, runtime: Runtime) -> GcResponse:
    """Delete the project's blobs that no kept version and no current file needs."""
    require_project(project_id, runtime)
    try:
        collected = collect_garbage(runtime.store, runtime.projects, project_id)
    except WriteBusy as exc:
        raise Conflict(f"{exc}; collect again later") from exc
    return GcResponse(removed=collected.removed, paths=collected.paths)


def _current_if(project_id: str, path: ProjectPath, digest: str, runtime: Runtime) -> bytes | None:
    """The file's bytes when they are `digest` (a file stored before versions were kept has no blob)."""
    if runtime.store.head(project_id, path) is None:
        return None
    data = runtime.store.get(project_id, path)
    return data if hashlib.sha256(data).hexdigest() == digest else None


def _kept(runtime: Runtime) -> str:
    days = runtime.projects.retention_s / 86400
    return f"each file's versions of the last {days:g} days and its last 100"
