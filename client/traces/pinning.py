"""A trace is pinned to the project version it started from; replay checks the files are still those.

ask --record ─► the session line names `project_version` (GET /api/projects/{id} before the first step)
replay ─► GET .../changes?since=<that version>
    nothing since ─► replay
    changes since, but every changed path holds again the bytes it held at that version (a write
        undone, a folder synced back) ─► replay, saying so
    otherwise ─► ProjectMoved: which files differ, and how to bring them back (or --ignore-version)

The bytes a path held at the recorded version are the last journal entry at or before it; a path
with no entry then did not exist (or predates the journal: then it counts as differing).
"""

from typing import Any

from reactstep.client.api import operations
from reactstep.client.api.calls import Op
from reactstep.client.api.errors import ClientError, Conflict

SHOWN_PATHS = 10


class ProjectMoved(ClientError):
    """The project no longer holds the files the trace started from."""


def check_pinned_version(session: dict[str, Any]) -> Op[str | None]:
    """None when the project is at the trace's version; a note when it moved on but holds the same
    files; ProjectMoved when files differ. A trace without a version is not checked."""
    pinned = session.get("project_version")
    if pinned is None:
        return None
    project_id = session["project_id"]
    try:
        feed = yield from operations.changes(project_id, pinned)
    except Conflict as exc:  # 409: `since` is ahead of the project
        raise ProjectMoved(
            f"the trace started from version {pinned} of project {project_id!r}, which this server's "
            "project has not reached (another server's, or one deleted and created again). Sync the "
            f"files the trace started from (`reactstep sync DIR --project {project_id} --force`), or "
            "pass --ignore-version"
        ) from exc
    now, later = feed.version, feed.changes
    if not later:
        return None
    current = {change.path: change.sha256 for change in later}
    history = (yield from operations.changes(project_id, 0)).changes
    then: dict[str, str | None] = {}
    for change in history:
        if change.version <= pinned and change.path in current:
            then[change.path] = change.sha256
    differ = sorted(path for path, digest in current.items() if then.get(path) != digest)
    if not differ:
        return (
            f"note: project {project_id!r} is at version {now}, not {pinned}, but every file changed "
            "since holds the bytes it held then"
        )
    shown = ", ".join(differ[:SHOWN_PATHS]) + (
        f" and {len(differ) - SHOWN_PATHS} more" if len(differ) > SHOWN_PATHS else ""
    )
    raise ProjectMoved(
        f"the trace started from version {pinned} of project {project_id!r}; it is now at version "
        f"{now}, and {len(differ)} file(s) differ from what they were then: {shown}. Bring them back "
        f"(e.g. sync a folder holding the files of then: `reactstep sync DIR --project {project_id} "
        "--force`) and replay again, or pass --ignore-version to replay against the files as they are"
    )
