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

from reactstep.client.loop import ApiError, ClientError
from reactstep.client.project_api import ProjectApi

SHOWN_PATHS = 10


class ProjectMoved(ClientError):
    """The project no longer holds the files the trace started from."""


def project_version(api: ProjectApi) -> int:
    """The project's version now (404 project_not_found as an ApiError)."""
    version: int = api.describe()["version"]
    return version


def check_pinned_version(api: ProjectApi, session: dict[str, Any]) -> str | None:
    """None when the project is at the trace's version; a note when it moved on but holds the same
    files; ProjectMoved when files differ. A trace without a version is not checked."""
    pinned = session.get("project_version")
    if pinned is None:
        return None
    try:
        now, later = api.changes(pinned)
    except ApiError as exc:
        if exc.code != "conflict":  # 409: `since` is ahead of the project
            raise
        raise ProjectMoved(
            f"the trace started from version {pinned} of project {api.project_id!r}, which is ahead of "
            "the project now: it was deleted and created again. Sync the files the trace started "
            f"from (`reactstep sync DIR --project {api.project_id} --force`), or pass --ignore-version"
        ) from exc
    if not later:
        return None
    current = {change["path"]: change["sha256"] for change in later}
    _, history = api.changes(0)
    then: dict[str, str | None] = {}
    for change in history:
        if change["version"] <= pinned and change["path"] in current:
            then[change["path"]] = change["sha256"]
    differ = sorted(path for path, digest in current.items() if then.get(path) != digest)
    if not differ:
        return (
            f"note: project {api.project_id!r} is at version {now}, not {pinned}, but every file changed "
            "since holds the bytes it held then"
        )
    shown = ", ".join(differ[:SHOWN_PATHS]) + (
        f" and {len(differ) - SHOWN_PATHS} more" if len(differ) > SHOWN_PATHS else ""
    )
    raise ProjectMoved(
        f"the trace started from version {pinned} of project {api.project_id!r}; it is now at version "
        f"{now}, and {len(differ)} file(s) differ from what they were then: {shown}. Bring them back "
        f"(e.g. sync a folder holding the files of then: `reactstep sync DIR --project {api.project_id} "
        "--force`) and replay again, or pass --ignore-version to replay against the files as they are"
    )
