"""Which sync state a sync or pull starts from: the folder's saved one while it still describes this
server's project; else a fresh one, said in one line, or a refusal when starting fresh could lose files.

A state (client/workspace/folder.py) names its server (the URL, normalised, or "in-process") and the project's
incarnation: `created` of GET /api/projects/{id}, which a project deleted and created again changes.

    no state (or an unreadable one) ─► fresh (base_version null), nothing said: a first sync
    same server, same incarnation ─► the state
    a state of another format (1: before states named the incarnation) ─► fresh, said
    another server ─► fresh, said (the folder has not synced with this one)
    another incarnation ─► fresh, said, when the server's project holds no file: nothing can be lost
        ─► StaleState when it holds files: the folder never sent them and a sync would replace or
           delete them (with force, or for a pull, which overwrites nothing unseen: fresh, said)
    no description (an in-process server whose embedded vector store another process holds cannot
        count chunks) ─► the state of this server as it is, its incarnation unchecked
"""

import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

from reactstep.client.api import operations
from reactstep.client.api.calls import Op
from reactstep.client.api.errors import ApiError, ClientError, NotFound
from reactstep.client.api.wire import wire_of
from reactstep.client.workspace.folder import OtherStateFormat, SyncState, load_state, state_path

_DEFAULT_PORTS = {"http": 80, "https": 443}


class StaleState(ClientError):
    """The folder synced another incarnation of the project, and the server's one holds files."""

    def __init__(self, root: Path, project: dict[str, Any], server: str, why: str) -> None:
        project_id = project["project_id"]
        super().__init__(
            f"refused: project {project_id!r} on {server} is not the one {root} last synced ({why}), and it "
            f"holds {project['files']} file(s) this folder never sent: a sync would replace or delete them; "
            f"nothing was changed. Pass --force to make it hold this folder's files anyway, or sync into "
            f"another --project (the folder's state: {state_path(root, project_id)})"
        )


def described(project_id: str, create: bool) -> Op[dict[str, Any] | None]:
    """GET the project (created first if asked and missing); None when the server cannot describe it
    because its embedded vector store is held by another process (files and sync still work)."""
    try:
        try:
            return wire_of((yield from operations.describe_project(project_id)))
        except NotFound as exc:
            if exc.code != "project_not_found" or not create:
                raise
        return wire_of((yield from operations.create_project(project_id)))
    except ApiError as exc:
        if exc.code != "vector_store_unavailable":
            raise
    return None


def starting_state(
    root: Path, project_id: str, server: str, project: dict[str, Any] | None, refuse_when_filled: bool
) -> SyncState:
    """The state to start from for `project` (its description) on `server`; StaleState if refused."""
    server = server_key(server)
    try:
        saved = load_state(root, project_id)
    except OtherStateFormat as exc:
        _say(f"{exc}: starting fresh")
        saved = None
    if project is None:  # nothing to check the incarnation against
        same_server = saved is not None and server_key(saved.server) == server
        return saved if saved is not None and same_server else SyncState(server)
    created = float(project["created"])
    fresh = SyncState(server, created=created)
    if saved is None:
        return fresh
    if server_key(saved.server) != server:
        _say(f"{root} last synced {project_id!r} with {saved.server}; starting fresh with {server}")
        return fresh
    why = _other_incarnation(saved, project)
    if why is None:
        saved.server, saved.created = server, created
        return saved
    if project["files"] and refuse_when_filled:
        raise StaleState(root, project, server, why)
    held = f"it holds {project['files']} file(s)" if project["files"] else "it holds no file"
    _say(
        f"project {project['project_id']!r} on {server} is not the one {root} last synced ({why}); {held}: "
        "starting fresh"
    )
    return fresh


def server_key(url: str) -> str:
    """The URL as a state names it: scheme and host lowercase, no default port, no trailing slash."""
    if not url.startswith(("http://", "https://", "HTTP://", "HTTPS://")):
        return url  # "in-process": the data dir's own server
    parsed = httpx.URL(url)
    host = f"[{parsed.host}]" if ":" in parsed.host else parsed.host
    port = "" if parsed.port in (None, _DEFAULT_PORTS[parsed.scheme]) else f":{parsed.port}"
    return f"{parsed.scheme}://{host}{port}{parsed.path.rstrip('/')}"


def _other_incarnation(saved: SyncState, project: dict[str, Any]) -> str | None:
    """Why the saved state describes another incarnation of the project; None when it is this one."""
    if saved.created is None:  # saved when the server could not say: only a version ahead of its tells
        if (saved.version or 0) <= project["version"]:
            return None
        return f"that one was at version {saved.version}, this one is at version {project['version']}"
    if saved.created == float(project["created"]):
        return None
    return f"that one was created {_when(saved.created)}, this one {_when(float(project['created']))}"


def _when(created: float) -> str:
    return datetime.fromtimestamp(created, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _say(line: str) -> None:
    print(line, file=sys.stderr)
