"""One project file over HTTP: store it, read it, delete it; conditional on its ETag when asked.

Every change goes through a JournaledStore, so it bumps the project's version and appears in its
change feed with origin "sync". Once stored, a change of an indexed project is re-indexed before
the answer (reindexing.py), so search never misses a saved file; when that fails, the file stays
stored and the answer's `index_state` reads `stale` until POST .../index.

Checked before a change, in this order, and nothing is stored when one fails:
    Content-Digest not the body's             ──► 400 digest_mismatch
    base_version ahead of the project         ──► 409 conflict (no such version yet: its latest)
    If-None-Match: * / If-Match do not hold   ──► 412 precondition_failed, naming the current ETag
    a tool's change after base_version that
    the path still holds (conflicts.py)       ──► 409 conflict, unless If-Match names the path's
                                                  current ETag (If-None-Match: * over a tool's
                                                  delete): the client overrides it on purpose
"""

import base64
import hashlib
from dataclasses import dataclass

from reactstep.contract.projects import StoredFile
from reactstep.service.errors import BadRequest, Conflict, NotFound, PreconditionFailed
from reactstep.service.runtime import Runtime
from reactstep.service.workspace.conflicts import refuse_ahead, unseen_tool_changes
from reactstep.service.workspace.names import refuse_twin
from reactstep.service.workspace.projects import require_project
from reactstep.service.workspace.reindexing import saved_index_state
from reactstep.tools.errors import StaleFile, ToolError, WriteBusy
from reactstep.tools.projects.journaled import JournaledStore
from reactstep.tools.store.objects import ObjectInfo
from reactstep.tools.store.paths import ProjectPath, file_path

ANY = "*"
PUT_ATTEMPTS = 8  # writers racing for one file: each attempt re-reads it and checks again
BASE_VERSION_REMEDY = "send the project version your copy of the file was read at"


@dataclass(frozen=True)
class Preconditions:
    """What the request's headers and query ask of the file's current state before a change."""

    if_match: frozenset[str] | None = None  # ETags the file must have ("*": any; it must exist)
    if_none_match: str | None = None  # "*": the file must not exist yet
    base_version: int | None = None  # the client's last sync: refuse to overwrite a tool's later write
    digests: tuple[tuple[str, bytes], ...] = ()  # (hashlib name, digest) the body must have


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
    path = file_path(raw_path)
    _check_digests(path, data, when.digests)
    refuse_ahead("base_version", when.base_version, project_id, head.version, BASE_VERSION_REMEDY)
    digest = hashlib.sha256(data).hexdigest()
    store = JournaledStore(runtime.store, runtime.projects, "sync")
    for _attempt in range(PUT_ATTEMPTS):
        # Checked and written as one conditional write: a writer in between makes it fail, and the
        # next attempt checks the preconditions against what that writer left (412 if they fail).
        current = runtime.store.head(project_id, path)
        _check(path, current, when, project_id, runtime)
        if current is None:
            refuse_twin(project_id, path, runtime)
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
            path=path,
            size=info.size,
            etag=info.etag,
            sha256=digest,
            version=version,
            changed=True,
            index_state=saved_index_state(project_id, store.changes, runtime),
        )
    raise Conflict(
        f"{path} is being written by others as fast as it can be stored; nothing was written; retry"
    )


def get_file(project_id: str, raw_path: str, runtime: Runtime) -> FileBody:
    """The file's bytes and ETag, or 404 file_not_found."""
    require_project(project_id, runtime)
    path = file_path(raw_path)
    info = _existing(project_id, path, runtime)
    data = runtime.store.get(project_id, path)
    # Read after the HEAD: should it change in between, the older ETag makes a later If-Match fail
    # (412, fetch again) rather than succeed over bytes the client never saw.
    return FileBody(data, info.etag)


def delete_file(project_id: str, raw_path: str, when: Preconditions, runtime: Runtime) -> StoredFile:
    """Delete the file, or 404 file_not_found when there is none."""
    head = require_project(project_id, runtime)
    path = file_path(raw_path)
    refuse_ahead("base_version", when.base_version, project_id, head.version, BASE_VERSION_REMEDY)
    current = _existing(project_id, path, runtime)
    _check(path, current, when, project_id, runtime)
    store = JournaledStore(runtime.store, runtime.projects, "sync")
    try:
        store.delete(project_id, path)
    except WriteBusy as exc:
        raise Conflict(f"{exc}; nothing was deleted") from exc
    version = store.changes[-1].version
    return StoredFile(
        path=path,
        size=0,
        etag=None,
        sha256=None,
        version=version,
        changed=True,
        index_state=saved_index_state(project_id, store.changes, runtime),
    )


def _existing(project_id: str, path: ProjectPath, runtime: Runtime) -> ObjectInfo:
    """The file's entry, or 404 file_not_found."""
    info = runtime.store.head(project_id, path)
    if info is None:
        raise NotFound(f"{path} is not a file of project {project_id!r}", code="file_not_found")
    return info


def _check_digests(path: ProjectPath, data: bytes, digests: tuple[tuple[str, bytes], ...]) -> None:
    """400 digest_mismatch when the body is not what its Content-Digest announced."""
    for name, expected in digests:
        actual = hashlib.new(name, data).digest()
        if actual != expected:
            label = name.replace("sha", "sha-")
            raise BadRequest(
                f"{path}: the body's {label} is :{base64.b64encode(actual).decode()}:, not the "
                f":{base64.b64encode(expected).decode()}: its Content-Digest announced; nothing was stored",
                code="digest_mismatch",
            )


def _check(
    path: ProjectPath, current: ObjectInfo | None, when: Preconditions, project_id: str, runtime: Runtime
) -> None:
    """412 when an If-Match / If-None-Match does not hold; 409 over a tool's change not seen."""
    etag = current.etag if current is not None else None
    if when.if_none_match == ANY and etag is not None:
        raise PreconditionFailed(
            f"{path} already exists (If-None-Match: *; its ETag is {etag}); nothing was written", etag=etag
        )
    if when.if_match is not None and (etag is None or not {ANY, etag} & when.if_match):
        held = f"its ETag is {etag}" if etag is not None else "it does not exist"
        raise PreconditionFailed(f"{path} does not match If-Match ({held}); nothing was changed", etag=etag)
    overrides = etag in (when.if_match or ()) if etag is not None else when.if_none_match == ANY
    if when.base_version is not None and not overrides:
        _refuse_unseen_tool_change(path, current, when.base_version, project_id, runtime)


def _refuse_unseen_tool_change(
    path: ProjectPath, current: ObjectInfo | None, base_version: int, project_id: str, runtime: Runtime
) -> None:
    """409 while the path holds a tool's change made after base_version (see conflicts.py)."""
    written = runtime.projects.tool_changes_since(project_id, base_version)
    if path not in written:
        return
    now = _sha256_now(project_id, path, current, runtime)
    if unseen_tool_changes(project_id, {path: written[path]}, {path: now}, runtime):
        etag = current.etag if current is not None else None
        override = f'If-Match: "{etag}"' if etag is not None else "If-None-Match: *"
        raise Conflict(
            f"{path} was changed by a tool at version {written[path]}, after your base_version "
            f"{base_version}; fetch it (GET .../files/{path}) and merge, or send {override} to "
            "replace it on purpose; nothing was changed",
            details={"path": path, "version": written[path], "etag": etag, "sha256": now},
        )


def _sha256_now(
    project_id: str, path: ProjectPath, current: ObjectInfo | None, runtime: Runtime
) -> str | None:
    """The sha256 of the file's bytes (None: it does not exist, or no longer does)."""
    if current is None:
        return None
    try:
        return hashlib.sha256(runtime.store.get(project_id, path)).hexdigest()
    except ToolError:
        return None  # deleted since its HEAD: the conditional write that follows fails and says so
