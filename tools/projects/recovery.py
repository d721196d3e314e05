"""Bring a path's history in line with its journal and its file, under the path's lease.

A writer that died (crash_points.py) left one of these, and the next holder of the lease settles it:

    died before the file was written  ─► file, journal, history agree; its blob is loose (collected later)
    file written, no journal entry    ─► the file's bytes are journaled now, under the dead writer's origin
    journaled, history not saved      ─► the journal's entries for the path since the writer began
                                         (intent "after") are added to the history
    head not moved to its entry       ─► journal.record helps the head forward (journal.py)

A path that has no history yet (stored before versions were kept) gets one: its current bytes are
kept as a blob and are the path's first kept version, so the version a change replaces stays readable.
"""

import hashlib
import time
from typing import Any

from reactstep.tools.projects.blobs import keep_blob
from reactstep.tools.projects.history import PathHistory, load_history, save_history
from reactstep.tools.projects.journal import Projects
from reactstep.tools.store.objects import ObjectInfo, ObjectStore
from reactstep.tools.store.paths import ProjectPath


def settle(
    store: ObjectStore, projects: Projects, project_id: str, path: ProjectPath, left: dict[str, Any] | None
) -> tuple[PathHistory, str | None, ObjectInfo | None]:
    """The path's history (saved when it changed; a new empty one is not), its etag and the file's
    entry; the lease is held."""
    history, etag = load_history(store, project_id, path)
    if history is None:
        history = PathHistory(path=path, floor=0)
    before = (len(history.entries), history.floor, len(history.loose), history.etag)
    now = time.time()
    if left is not None and "after" in left:
        _add_journaled(projects, project_id, history, int(left["after"]), now)
    current = store.head(project_id, path)
    held = None if current is None else current.etag
    if held != history.etag:
        _reconcile(store, projects, project_id, history, current, left, now)
    orphan = None if left is None else left.get("sha256")
    if isinstance(orphan, str) and orphan not in history.kept_sha256s():
        history.loose.append((orphan, now))  # its blob may exist with no version naming it
    if before != (len(history.entries), history.floor, len(history.loose), history.etag):
        etag = save_history(store, project_id, history, etag)
    return history, etag, current


def _add_journaled(projects: Projects, project_id: str, history: PathHistory, after: int, now: float) -> None:
    """Journal entries of the path after version `after` that its history does not list yet."""
    head = projects.caught_up(project_id)
    for version in range(after + 1, head + 1):
        change = projects.change(project_id, version)
        if change.path == history.path and version > history.last_version:
            history.append(version, change.sha256, now)


def _reconcile(
    store: ObjectStore,
    projects: Projects,
    project_id: str,
    history: PathHistory,
    current: ObjectInfo | None,
    left: dict[str, Any] | None,
    now: float,
) -> None:
    """The file differs from the history's last entry: journal what it holds (or adopt it)."""
    data = None if current is None else store.get(project_id, path=history.path)
    digest = None if data is None else hashlib.sha256(data).hexdigest()
    history.etag = None if current is None else current.etag
    if digest == history.last_sha256 and history.entries:
        return  # same bytes; only the etag was unknown
    if data is not None:
        keep_blob(store, project_id, data)
    dead_writer = left is not None and left.get("sha256") == digest
    if not history.entries and data is not None and not dead_writer:
        version = projects.head(project_id).version  # stored before versions were kept: adopt it
        history.floor = version
        history.append(version, digest, now)
        return
    if not history.entries and data is None:
        return  # never existed here
    origin = str(left.get("origin", "sync")) if left is not None else "sync"
    change = projects.record(project_id, history.path, digest, origin)
    history.append(change.version, digest, now)
