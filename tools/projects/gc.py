"""Garbage collection: delete the blobs no kept version and no current file needs.

gc.json   {"through": version, "paths": [every path the journal named up to `through`]}

1. walk the journal from `through` to the head: every path ever changed (once per run, not again)
2. per path, under its lease: settle it (recovery.py), prune it to the retention window; its kept
   versions' sha256s are needed, its `loose` ones (pruned, or left by a dead writer) are candidates
3. a candidate loose for GRACE_S that nothing needs (nor a current file) is read, then deleted
4. the journal after step 1's head is read again: a write that reused a deleted blob meanwhile
   gets it back (the writer re-checks its blob too, versioned.py), so no kept version loses bytes
5. per path, the loose list forgets what was deleted or is needed again
"""

import json
import time
from collections.abc import Callable
from dataclasses import dataclass

from reactstep.tools.errors import WriteBusy
from reactstep.tools.projects.blobs import blob_name, read_blob, remove_blob
from reactstep.tools.projects.history import PathHistory, load_history, save_history
from reactstep.tools.projects.journal import Projects
from reactstep.tools.projects.leases import holding
from reactstep.tools.projects.recovery import settle
from reactstep.tools.store.objects import ObjectStore
from reactstep.tools.store.paths import ProjectPath

CURSOR = "gc.json"
GRACE_S = 3600.0  # a blob loose for less than this is kept: a write may be about to name it


@dataclass(frozen=True)
class Collected:
    """What one collection did: the sha256s of the blobs it deleted and how many paths it read."""

    removed: list[str]
    paths: int


def collect_garbage(
    store: ObjectStore,
    projects: Projects,
    project_id: str,
    grace_s: float = GRACE_S,
    now: float | None = None,
) -> Collected:
    """Delete the project's unneeded blobs (see the module docstring); `now` defaults to the clock."""
    now = time.time() if now is None else now
    through, paths = _cursor(store, project_id)
    start = projects.head(project_id).version
    paths |= {projects.change(project_id, version).path for version in range(through + 1, start + 1)}
    needed = set(projects.hashes(project_id).values())
    loose: dict[str, float] = {}
    for path in sorted(paths):
        history = _tidied(
            store, projects, project_id, path, lambda h: bool(h.prune(projects.retention_s, now))
        )
        needed |= history.kept_sha256s()
        for sha, since in history.loose:
            loose[sha] = max(since, loose.get(sha, since))
    doomed = {sha for sha, since in loose.items() if sha not in needed and now - since >= grace_s}
    removed = _remove(store, projects, project_id, doomed, start)

    def forget(history: PathHistory) -> bool:
        kept = [(sha, since) for sha, since in history.loose if sha not in needed and sha not in doomed]
        changed, history.loose = kept != history.loose, kept
        return changed

    for path in sorted(paths):
        _tidied(store, projects, project_id, path, forget)
    body = {"through": start, "paths": sorted(paths)}
    store.put_index_file(project_id, CURSOR, json.dumps(body).encode())
    return Collected(removed=sorted(removed), paths=len(paths))


def _remove(
    store: ObjectStore, projects: Projects, project_id: str, doomed: set[str], start: int
) -> set[str]:
    """Delete the doomed blobs; give back any that a write after version `start` named meanwhile."""
    held = {sha: read_blob(store, project_id, sha) for sha in doomed}
    for sha in doomed:
        remove_blob(store, project_id, sha)
    head = projects.head(project_id).version
    for version in range(start + 1, head + 1):
        named = projects.change(project_id, version).sha256
        data = held.get(named) if named is not None else None
        if named is not None and data is not None:
            store.put_index_file(project_id, blob_name(named), data)
            doomed.discard(named)
    return {sha for sha in doomed if held[sha] is not None}


def _tidied(
    store: ObjectStore,
    projects: Projects,
    project_id: str,
    path: ProjectPath,
    tidy: Callable[[PathHistory], bool],
) -> PathHistory:
    """Settle the path under its lease and apply `tidy` (True: save it); a path a writer holds for
    longer than a write waits is only read, and tidied next time."""
    try:
        with holding(store, project_id, path) as left:
            history, etag, _ = settle(store, projects, project_id, path, left)
            if tidy(history):
                save_history(store, project_id, history, etag)
            return history
    except WriteBusy:
        return load_history(store, project_id, path)[0] or PathHistory(path=path, floor=0)


def _cursor(store: ObjectStore, project_id: str) -> tuple[int, set[ProjectPath]]:
    data = store.get_index_file(project_id, CURSOR)
    if data is None:
        return 0, set()
    body = json.loads(data)
    return int(body["through"]), {ProjectPath(str(path)) for path in body["paths"]}
