"""`reactstep pull`: write the server's tool changes into a folder, never over an edit made there.

GET the project ─► the state to start from (client/workspace/sync_state.py; another incarnation: fresh, said)
GET .../changes?since=<the folder's synced version, or 0> ─► each path a tool changed, and every hash
    the feed shows it had before its newest change
    the folder's copy is the newest already ─► nothing to do
    the folder's copy is one the server had (in the feed, or at the last sync), or the folder never
        had the file ─► GET it and write it atomically (removed when the tool deleted it)
    anything else is an edit made in the folder ─► PullRefused naming it, nothing written
        (with force, the server's bytes win)
─► the folder's state moves to the feed's version, so the next sync starts from there
"""

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reactstep.client.api import operations
from reactstep.client.api.calls import Op
from reactstep.client.api.errors import ClientError
from reactstep.client.workspace.folder import remove_file, save_state, write_file
from reactstep.client.workspace.sync_state import described, starting_state

Progress = Callable[[int, int, str], None]


class PullRefused(ClientError):
    """Files the folder edited since it last synced, which a pull would overwrite."""

    def __init__(self, project_id: str, paths: list[str], root: Path) -> None:
        super().__init__(
            f"refused: {len(paths)} file(s) of {root} changed here and on the server (by a tool of project "
            f"{project_id!r}): {', '.join(paths)}; nothing was written. Pass --force to take the server's"
        )
        self.paths = paths


@dataclass
class PullReport:
    """What one pull did."""

    project_id: str
    version: int = 0
    written: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    current: int = 0  # tool changes the folder held already

    def summary(self) -> str:
        """The one line every pull prints."""
        return (
            f"pulled {self.project_id} to version {self.version}: wrote {len(self.written)} files, "
            f"removed {len(self.removed)}, {self.current} already here"
        )


@dataclass
class _PathHistory:
    newest: str | None
    earlier: set[str | None] = field(default_factory=set)
    by_tool: bool = False


def pull_folder(
    project_id: str, root: Path, server: str, force: bool = False, progress: Progress | None = None
) -> Op[PullReport]:
    """Bring the tool changes made since the folder's last sync or pull into the folder.
    `server` names the server in the folder's sync state (its URL, or "in-process")."""
    project = yield from described(project_id, create=False)
    state = starting_state(root, project_id, server, project, refuse_when_filled=False)
    feed = yield from operations.changes(project_id, state.version or 0)
    version = feed.version
    report = PullReport(project_id, version)
    histories = _histories([change.model_dump() for change in feed.changes])
    planned: list[str] = []
    refused: list[str] = []
    for path, history in sorted(histories.items()):
        if not history.by_tool:
            continue
        here = _local_hash(root / path)
        if here == history.newest:
            report.current += 1
            continue
        synced = state.files.get(path)
        known = history.earlier | ({synced.sha256} if synced is not None else set())
        never_had = here is None and synced is None
        (planned if force or never_had or here in known else refused).append(path)
    if refused:
        raise PullRefused(project_id, refused, root)
    for done, path in enumerate(planned, start=1):
        found = yield from operations.download(project_id, path)
        if found is None:
            remove_file(root, path)
            state.files.pop(path, None)
            report.removed.append(path)
        else:
            state.files[path] = write_file(root, path, found[0])
            report.written.append(path)
        if progress is not None:
            yield from operations.invoke(progress, done, len(planned), path)
    state.version = version
    save_state(root, project_id, state)
    return report


def _histories(changes: list[dict[str, Any]]) -> dict[str, _PathHistory]:
    """Per path: its newest hash, the hashes it had before, and whether a tool changed it."""
    histories: dict[str, _PathHistory] = {}
    for change in changes:
        history = histories.get(change["path"])
        if history is None:
            history = histories[change["path"]] = _PathHistory(change["sha256"])
        else:
            history.earlier.add(history.newest)
            history.newest = change["sha256"]
        history.by_tool = history.by_tool or change["origin"] == "tool"
    return histories


def _local_hash(path: Path) -> str | None:
    if not path.is_file():
        return None
    return hashlib.sha256(path.read_bytes()).hexdigest()
