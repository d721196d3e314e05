"""One project file over HTTP: store it, read it, delete it; conditional on its ETag when asked.

Every change goes through a JournaledStore, so it bumps the project's version and appears in its
change feed with origin "sync". The index is not touched here: the project reads `stale` until
POST .../index (or a sync with "index": true) brings it back to `ready`.
"""

import hashlib
from dataclasses import dataclass

from pydantic import BaseModel

from reactstep.service.errors import Conflict, FileNotFound, PreconditionFailed
from reactstep.service.runtime import Runtime
from reactstep.service.workspace.failures import translated_backend_errors
from reactstep.service.workspace.projects import require_project, valid_path
from reactstep.tools.errors import StaleFile, WriteBusy
from reactstep.tools.projects.journaled import JournaledStore
from reactstep.tools.store.objects import ObjectInfo, file_path

ANY = "*"
PUT_ATTEMPTS = 8  # writers racing for one file: each attempt re-reads it and checks again


@dataclass(frozen=True)
class Preconditions:
    """What the request's headers and query ask of the file's current state before a change."""

    if_match: frozenset[str] | None = None  # ETags the file must have ("*": any; it must exist)
    if_none_match: str | None = None  # "*": the file must not exist yet
    base_version: int | None = None  # the client's last sync: refuse to overwrite a tool's later write


class StoredFile(BaseModel):
    """What a PUT or DELETE of one file did."""

    path: str
    size: int
    etag: str | None
    sha256: str | None
    version: int
    changed: bool


@dataclass(frozen=True)
class FileBody:
    """A file's bytes with its ETag, for GET."""

    data: bytes
    etag: str


def put_file(
    project_id: str, raw_path: str, data: bytes, when: Preconditions, runtime: Runtime
) -> StoredFile:
    """Store `data` at the path; identical bytes change nothing and keep the version."""
    head = require_project(project_id, runtime)
    path = _file_path(raw_path)
    digest = hashlib.sha256(data).hexdigest()
    store = JournaledStore(runtime.store, runtime.projects, "sync")
    with translated_backend_errors():
        for _attempt in range(PUT_ATTEMPTS):
            # Checked and written as one conditional write: a writer in between makes it fail, and the
            # next attempt checks the preconditions against what that writer left (412 if they fail).
            current = runtime.store.head(project_id, path)
            _check(path, current, when, project_id, runtime)
            if current is not None and current.etag == hashlib.md5(data).hexdigest():
                return StoredFile(
                    path=path,
                    size=len(data),
                    etag=current.etag,
                    sha256=digest,
                    version=head.version,
                    changed=False,
                )
            try:
                info = store.put_if(project_id, path, data, current.etag if current is not None else None)
            except StaleFile:
                continue
            except WriteBusy as exc:
                raise Conflict(f"{exc}; nothing was written") from exc
            version = store.changes[-1].version
            return StoredFile(
                path=path, size=info.size, etag=info.etag, sha256=digest, version=version, changed=True
            )
    raise Conflict(
        f"{path} is being written by others as fast as it can be stored; nothing was written; retry"
    )


def get_file(project_id: str, raw_path: str, runtime: Runtime) -> FileBody:
    """The file's bytes and ETag, or 404 file_not_found."""
    require_project(project_id, runtime)
    path = _file_path(raw_path)
    with translated_backend_errors():
        info = _existing(project_id, path, runtime)
        data = runtime.store.get(project_id, path)
    # Read after the HEAD: should it change in between, the older ETag makes a later If-Match fail
    # (412, fetch again) rather than succeed over bytes the client never saw.
    return FileBody(data, info.etag)


def delete_file(project_id: str, raw_path: str, when: Preconditions, runtime: Runtime) -> StoredFile:
    """Delete the file, or 404 file_not_found when there is none."""
    require_project(project_id, runtime)
    path = _file_path(raw_path)
    with translated_backend_errors():
        current = _existing(project_id, path, runtime)
        _check(path, current, when, project_id, runtime)
        store = JournaledStore(runtime.store, runtime.projects, "sync")
        try:
            store.delete(project_id, path)
        except WriteBusy as exc:
            raise Conflict(f"{exc}; nothing was deleted") from exc
    version = store.changes[-1].version
    return StoredFile(path=path, size=0, etag=None, sha256=None, version=version, changed=True)


def _file_path(raw_path: str) -> str:
    """The URL's path as a clean project path (422 invalid_path when it is not one)."""
    with valid_path():
        return file_path(raw_path)


def _existing(project_id: str, path: str, runtime: Runtime) -> ObjectInfo:
    """The file's entry, or 404 file_not_found."""
    info = runtime.store.head(project_id, path)
    if info is None:
        raise FileNotFound(f"{path} is not a file of project {project_id!r}")
    return info


def _check(
    path: str, current: ObjectInfo | None, when: Preconditions, project_id: str, runtime: Runtime
) -> None:
    """412 when an If-Match / If-None-Match does not hold; 409 when a tool wrote it since base_version."""
    etag = current.etag if current is not None else None
    if when.if_none_match == ANY and etag is not None:
        raise PreconditionFailed(f"{path} already exists (If-None-Match: *); nothing was written")
    if when.if_match is not None and (etag is None or not {ANY, etag} & when.if_match):
        held = f"its ETag is {etag}" if etag is not None else "it does not exist"
        raise PreconditionFailed(f"{path} does not match If-Match ({held}); nothing was changed")
    if when.base_version is not None:
        written = runtime.projects.tool_changes_since(project_id, when.base_version)
        if path in written:
            raise Conflict(
                f"{path} was changed by a tool at version {written[path]}, after your base_version "
                f"{when.base_version}; fetch it (GET .../changes?since={when.base_version}) first"
            )
