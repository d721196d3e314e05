"""Sync in one round trip, and the change feed that brings the server's own writes home.

client manifest {path: sha256} ──► compared with the server's hashes of its files
    differs or missing on the server          ──► upload   (the client PUTs them, If-Match: etags[path])
    on the server, not in the manifest        ──► delete   (applied only with "apply_deletes": true)
    a tool changed it after base_version, it
    still holds the tool's bytes, and the
    client's bytes are not those              ──► conflict (neither: fetch it, or override it on purpose
                                                  with If-Match: its etag; see conflicts.py)

`version` is the client's next base_version: `head_version` when nothing conflicts, else one before
the earliest conflict, so that following the answer keeps reporting each conflict until it is
resolved, and never turns it into an upload.
"""

from reactstep.contract.indexing import IndexRequest
from reactstep.contract.projects import ChangeItem, ChangesResponse
from reactstep.contract.sync import SyncConflict, SyncRequest, SyncResponse
from reactstep.service.errors import Conflict, ValidationFailed
from reactstep.service.runtime import Runtime
from reactstep.service.workspace.conflicts import refuse_ahead, unseen_tool_changes
from reactstep.service.workspace.indexing import run_index
from reactstep.service.workspace.projects import require_project
from reactstep.service.workspace.versions import base_sha256, version_url
from reactstep.tools.errors import WriteBusy
from reactstep.tools.projects.journal import Change
from reactstep.tools.projects.journaled import JournaledStore
from reactstep.tools.store.paths import ProjectPath, normalize_path, twins


def run_sync(project_id: str, request: SyncRequest, runtime: Runtime) -> SyncResponse:
    """Compare the manifest with the project's files; delete (when asked) and index (when asked)."""
    ours = _checked_manifest(request.files)
    head = require_project(project_id, runtime)
    base = request.base_version
    remedy = "send the version of your last sync, or base_version null to compare every file"
    refuse_ahead("base_version", base, project_id, head.version, remedy)
    listed = runtime.projects.tagged_hashes(project_id)
    server = {path: digest for path, (_, digest) in listed.items()}
    written = runtime.projects.tool_changes_since(project_id, base or 0)
    differ = {path: version for path, version in written.items() if ours.get(path) != server.get(path)}
    unseen = unseen_tool_changes(project_id, differ, {path: server.get(path) for path in differ}, runtime)
    conflicts = [_conflict(project_id, path, unseen[path], listed, base, runtime) for path in sorted(unseen)]
    held = set(unseen)
    upload = sorted(path for path, digest in ours.items() if server.get(path) != digest and path not in held)
    delete = sorted(path for path in server if path not in ours and path not in held)
    deleted = _apply_deletes(project_id, delete, head.version, runtime) if request.apply_deletes else []
    etags = {path: listed[path][0] if path in listed else None for path in upload}
    index = None
    if request.index:
        index_request = IndexRequest(
            embedding_model_config=request.embedding_model_config, user_api_keys=request.user_api_keys
        )
        index = run_index(project_id, index_request, runtime)
    return SyncResponse(
        version=min([head.version, *(conflict.version - 1 for conflict in conflicts)]),
        head_version=head.version,
        upload=upload,
        etags=etags,
        delete=[] if request.apply_deletes else delete,
        deleted=deleted,
        conflicts=conflicts,
        index=index,
    )


def list_changes(project_id: str, since: int, runtime: Runtime) -> ChangesResponse:
    """Every change after version `since`, oldest first."""
    head = require_project(project_id, runtime)
    refuse_ahead(
        "since", since, project_id, head.version, f"ask for the changes since {head.version} or earlier"
    )
    version, changes = runtime.projects.changes_since(project_id, since)
    return ChangesResponse(version=version, changes=[_item(project_id, change) for change in changes])


def _checked_manifest(files: dict[str, str]) -> dict[ProjectPath, str]:
    """The manifest by project path; 422 for a manifest naming a path that is not canonical (not
    UTF-8, not NFC, ...: invalid_path naming it); 409 name_collision for two paths that differ only
    by case or Unicode normalisation, which a case-insensitive disk would merge into one file. (Its
    length is the contract's bound.)"""
    checked: dict[ProjectPath, str] = {}
    for path, digest in files.items():
        clean = normalize_path(path)
        if clean != path or not clean:
            raise ValidationFailed(
                f"manifest path {path!r} is not in canonical form; send {clean!r}"
                if clean
                else "the manifest names the project root; name files relative to it"
            )
        checked[clean] = digest
    if (pair := twins(files)) is not None:
        raise Conflict(
            f"the manifest names {pair[0]!r} and {pair[1]!r}, which differ only by case or Unicode "
            "normalisation (one file on a case-insensitive disk); rename one of them",
            code="name_collision",
        )
    return checked


def _apply_deletes(
    project_id: str, delete: list[ProjectPath], planned_at: int, runtime: Runtime
) -> list[ProjectPath]:
    """Delete what the plan said, unless the project moved on since (409: sync again)."""
    now = runtime.projects.head(project_id).version
    if now != planned_at:
        raise Conflict(
            f"project {project_id!r} changed during this sync (version {planned_at} -> {now}); nothing "
            "was deleted; sync again"
        )
    store = JournaledStore(runtime.store, runtime.projects, "sync")
    for done, path in enumerate(delete):
        try:
            store.delete(project_id, path)
        except WriteBusy as exc:
            raise Conflict(f"{exc}; {done} of {len(delete)} deletes were made; sync again") from exc
    # Only what this sync removed: a path another writer deleted meanwhile is not reported twice.
    return [change.path for change in store.changes]


def _conflict(
    project_id: str,
    path: ProjectPath,
    version: int,
    listed: dict[ProjectPath, tuple[str, str]],
    base: int | None,
    runtime: Runtime,
) -> SyncConflict:
    """The conflict entry of a path: the server's bytes as the listing found them, and the path's
    sha256 at the client's base (a 3-way merge's base; None without a base or when not kept)."""
    etag, digest = listed.get(path, (None, None))
    at_base = base_sha256(project_id, path, base, runtime) if base is not None else None
    return SyncConflict(path=path, version=version, sha256=digest, etag=etag, base_sha256=at_base)


def _item(project_id: str, change: Change) -> ChangeItem:
    url = None if change.sha256 is None else version_url(project_id, change.path, change.version)
    return ChangeItem(
        version=change.version, path=change.path, sha256=change.sha256, origin=change.origin, url=url
    )
