"""One change of one file, kept so that every version stays readable, and reads of old versions.

    read the head (v0) ─► take the path's lease with the intent {sha256, origin, after: v0}
        ─► settle what a dead holder left (recovery.py)          write.lease-taken
        ─► keep the new bytes as blob-<sha256>                   write.blob-kept
        ─► write (or delete) the file                            write.file-written
        ─► journal the change (version v)                        write.journaled
        ─► add (v, sha256) to the path's history, pruned         write.history-saved
        ─► give the lease back

A blob that existed already is written again (a no-op) after the history names it: garbage
collection (gc.py) may have taken it between the first check and the history's save.
"""

import hashlib
import time

from reactstep.tools.errors import StaleFile, VersionNotKept
from reactstep.tools.projects.blobs import keep_blob
from reactstep.tools.projects.crash_points import reached
from reactstep.tools.projects.history import load_history, save_history
from reactstep.tools.projects.journal import Change, Projects
from reactstep.tools.projects.leases import holding, lease_name
from reactstep.tools.projects.recovery import settle
from reactstep.tools.store.objects import ObjectInfo, ObjectStore
from reactstep.tools.store.paths import ProjectPath

UNCONDITIONAL = "*unconditional*"  # expected_etag: write whatever the file holds


def change_file(
    store: ObjectStore,
    projects: Projects,
    project_id: str,
    path: ProjectPath,
    data: bytes | None,
    origin: str,
    expected_etag: str | None = UNCONDITIONAL,
) -> tuple[ObjectInfo | None, Change | None]:
    """Write `data` (None: delete) at the clean `path`; the file's entry and the change (None: none).

    `expected_etag`: the write lands only while the file has this etag (None: while it is absent),
    else StaleFile and nothing is written. Deleting a missing file changes nothing.
    """
    digest = None if data is None else hashlib.sha256(data).hexdigest()
    intent = {"sha256": digest, "origin": origin, "after": projects.head(project_id).version}
    with holding(store, project_id, path, intent) as left:
        reached("write.lease-taken")
        history, etag, current = settle(store, projects, project_id, path, left)
        held = None if current is None else current.etag
        if expected_etag != UNCONDITIONAL and held != expected_etag:
            raise StaleFile(path)
        if data is None and current is None:
            store.delete(project_id, path)  # nothing to journal; the store still checks the path
            return None, None
        existed = False
        if data is not None:
            existed = keep_blob(store, project_id, data)[1]
            reached("write.blob-kept")
            info: ObjectInfo | None = (
                store.put(project_id, path, data)
                if expected_etag == UNCONDITIONAL
                else store.put_if(project_id, path, data, expected_etag)
            )
        else:
            store.delete(project_id, path)
            info = None
        reached("write.file-written")
        change = projects.record(project_id, path, digest, origin)
        reached("write.journaled")
        now = time.time()
        history.append(change.version, digest, now)
        history.etag = None if info is None else info.etag
        history.prune(projects.retention_s, now)
        save_history(store, project_id, history, etag)
        reached("write.history-saved")
        if existed and data is not None:
            keep_blob(store, project_id, data)
    return info, change


def sha256_at(
    store: ObjectStore, projects: Projects, project_id: str, path: ProjectPath, version: int
) -> str | None:
    """The sha256 of the bytes the clean `path` held at `version` (<= the project's version).

    None: the path did not exist then (or was deleted). VersionNotKept: past the retention window,
    or from before versions were kept. A write in progress on the path is waited for, and a dead
    writer's is finished, so a journaled version is never answered with older bytes.
    """
    if store.get_index_file(project_id, lease_name(path)) is not None:
        with holding(store, project_id, path) as left:
            history = settle(store, projects, project_id, path, left)[0]
    else:
        found = load_history(store, project_id, path)[0]
        if found is None:
            return _unversioned(store, projects, project_id, path, version)
        history = found
    return history.sha256_at(version)


def _unversioned(
    store: ObjectStore, projects: Projects, project_id: str, path: ProjectPath, version: int
) -> str | None:
    """A path no kept version names: absent, or bytes stored before versions were kept."""
    if store.head(project_id, path) is None:
        return None
    if version < projects.head(project_id).version:
        raise VersionNotKept(path, version)
    return hashlib.sha256(store.get(project_id, path)).hexdigest()
