"""Which tool writes a client has not seen, the one rule that sync and PUT / DELETE share.

A tool's change of a path after the client's base_version is unseen while the path still holds
the tool's bytes (or is still gone, when the tool deleted it). Until the client fetches it (its
bytes then equal the server's) or overrides it on purpose (If-Match: the path's current ETag, or
If-None-Match: * over a tool's delete), a sync lists the path in `conflicts` and never in `upload`,
and a PUT or DELETE with that base_version is 409. A write after the tool's (an override, or
another client's) makes the tool's change seen: the path holds other bytes now.
"""

from reactstep.service.errors import Conflict
from reactstep.service.runtime import Runtime
from reactstep.tools.store.paths import ProjectPath


def refuse_ahead(name: str, value: int | None, project_id: str, version: int, remedy: str) -> None:
    """409 for a base_version / since ahead of the project, with `remedy`: what to send instead.

    The server cannot tell why (a wrong number, a project deleted and created again, another
    server): nothing of a deleted project is kept, so the message says only what it knows."""
    if value is not None and value > version:
        raise Conflict(f"{name} {value}: {ahead_of_project(value, project_id, version)}; {remedy}")


def ahead_of_project(asked: int, project_id: str, version: int) -> str:
    """A version the project has not reached, said with the one it has and where to read it."""
    return (
        f"project {project_id!r} has no version {asked} yet; its latest is version {version} "
        f"(GET /api/projects/{project_id})"
    )


def unseen_tool_changes(
    project_id: str, written: dict[ProjectPath, int], now: dict[ProjectPath, str | None], runtime: Runtime
) -> dict[ProjectPath, int]:
    """The paths of `written` (path -> version of a tool's last change) whose sha256 in `now` is
    still the one that change left."""
    return {
        path: version
        for path, version in written.items()
        if path in now and tool_sha256(project_id, version, runtime) == now[path]
    }


def tool_sha256(project_id: str, version: int, runtime: Runtime) -> str | None:
    """The sha256 the change at `version` left its path with (None: it deleted the path)."""
    _, changes = runtime.projects.changes_since(project_id, version - 1, limit=1)
    return changes[0].sha256
