"""A project's version and change journal, kept in the object store beside its files.

    <index dir>/<project>/head.json                  {version, indexed_version, indexing, tool_changes, ...}
    <index dir>/<project>/change-000000000007.json   {version: 7, path, sha256 | null, origin}

Every change gets the next version: read the head (version v, etag e) → create change-(v+1) only
if absent → replace the head only while its etag is still e. Both writes are conditional (S3 and
R2 If-None-Match / If-Match, a lock on the local store), so several processes on one bucket never
give two changes one version, and the head never names a version whose entry is missing. A writer
that finds change-(v+1) already there helps the head forward to it and tries v+2: a writer that
dies between its two writes leaves no gap. No state lives in the process.

The head also keeps the last TOOL_WINDOW tool changes, so "did a tool write this path since my
base version?" is one read, not a walk of the journal.
"""

import contextlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from reactstep.tools.errors import ProjectNotFound, StaleFile
from reactstep.tools.projects.crash_points import reached
from reactstep.tools.projects.hashes import content_hashes, tagged_hashes
from reactstep.tools.store.objects import ObjectStore
from reactstep.tools.store.paths import ProjectPath

HEAD = "head.json"
TOOL_WINDOW = 1000
PAGE = 1000
MAX_ATTEMPTS = 64
RETENTION_S = 30 * 86400.0


@dataclass(frozen=True)
class Change:
    """One journaled change: the version it made, the path, the new bytes' sha256 (None: deleted)."""

    version: int
    path: ProjectPath
    sha256: str | None
    origin: str  # "sync" (the client's upload or delete) or "tool" (an approved write)


@dataclass(frozen=True)
class ProjectHead:
    """Where the project stands: its version, how far its index is current, and any index job."""

    version: int
    indexed_version: int
    created: float
    indexing: dict[str, Any] | None
    tool_changes: tuple[tuple[int, ProjectPath], ...]  # (version, path), oldest first
    tool_window_from: int  # tool_changes is complete for versions after this one
    indexed_at: float | None = None  # when an index run last finished; None: never indexed
    indexed_collection: str | None = None  # the vector collection indexed_version describes

    @property
    def index_state(self) -> str:
        """ "indexing" while a job runs, "ready" when the index describes this version, else "stale"."""
        if self.indexing is not None:
            return "indexing"
        return "ready" if self.indexed_version >= self.version else "stale"


def change_name(version: int) -> str:
    """The index file name of one journal entry; zero-padded so names sort by version."""
    return f"change-{version:012d}.json"


class Projects:
    """Create, read, version and delete projects in `store`; safe across threads and processes.

    `retention_s`: how long a replaced version of a file stays readable (history.py keeps more).
    """

    def __init__(self, store: ObjectStore, retention_s: float = RETENTION_S) -> None:
        self._store = store
        self.retention_s = retention_s

    def create(self, project_id: str) -> bool:
        """Create the project at version 0; False when it exists already (a legacy one is adopted)."""
        if self._store.get_index_file_tagged(project_id, HEAD) is not None:
            return False
        legacy = next(iter(self._store.list(project_id)), None) is not None
        head = ProjectHead(0, 0, time.time(), None, (), 0)
        try:
            self._store.put_index_file_if(project_id, HEAD, _encode_head(head), None)
        except StaleFile:
            return False
        return not legacy

    def head(self, project_id: str) -> ProjectHead:
        """The project's head; ProjectNotFound when it has none.

        A project stored before versions existed (files, no head) is adopted at version 0.
        """
        found = self._store.get_index_file_tagged(project_id, HEAD)
        if found is None:
            if next(iter(self._store.list(project_id)), None) is None:
                raise ProjectNotFound(project_id)
            self.create(project_id)
            found = self._store.get_index_file_tagged(project_id, HEAD)
            if found is None:  # deleted meanwhile
                raise ProjectNotFound(project_id)
        return _decode_head(found[0])

    def exists(self, project_id: str) -> bool:
        """Whether the project exists (adopting a legacy one, as head does)."""
        try:
            self.head(project_id)
        except ProjectNotFound:
            return False
        return True

    def record(self, project_id: str, path: ProjectPath, sha256: str | None, origin: str) -> Change:
        """Journal one change under the next free version and move the head to it."""
        for _ in range(MAX_ATTEMPTS):
            head, etag = self._tagged_head(project_id)
            change = Change(head.version + 1, path, sha256, origin)
            try:
                self._store.put_index_file_if(
                    project_id, change_name(change.version), _encode_change(change), None
                )
            except StaleFile:
                self._help_forward(project_id, head.version + 1)  # another writer took it: finish its step
                continue
            reached("journal.entry-written")
            self._advance(project_id, change, head, etag)
            return change
        raise StaleFile(f"the journal of project {project_id!r} (too many concurrent writers; try again)")

    def changes_since(self, project_id: str, since: int, limit: int = PAGE) -> tuple[int, list[Change]]:
        """The head version and the changes after `since`, oldest first, at most `limit` of them."""
        head = self.head(project_id)
        last = min(head.version, since + limit)
        return head.version, [self._change(project_id, version) for version in range(since + 1, last + 1)]

    def caught_up(self, project_id: str) -> int:
        """The head's version after moving it over entries a dead writer journaled but did not name."""
        version = self.head(project_id).version
        while self._store.get_index_file(project_id, change_name(version + 1)) is not None:
            self._help_forward(project_id, version + 1)
            version = self.head(project_id).version
        return version

    def change(self, project_id: str, version: int) -> Change:
        """The journal entry of `version` (1 <= version <= the head's)."""
        return self._change(project_id, version)

    def tool_changes_since(self, project_id: str, since: int) -> dict[ProjectPath, int]:
        """Each path a tool changed after version `since`, with the last version that changed it."""
        head = self.head(project_id)
        if since >= head.tool_window_from:
            return {path: version for version, path in head.tool_changes if version > since}
        written: dict[ProjectPath, int] = {}
        for version in range(since + 1, head.version + 1):  # older than the window: walk the journal
            change = self._change(project_id, version)
            if change.origin == "tool":
                written[change.path] = version
        return written

    def mark_indexed(
        self, project_id: str, version: int, collection: str, *, since: int | None = None
    ) -> None:
        """`collection` now describes `version` (given `since`: only if that collection described `since`)."""

        def update(head: ProjectHead) -> ProjectHead | None:
            if since is not None and (head.indexed_version < since or head.indexed_collection != collection):
                return None  # it was stale before this change; it stays stale
            return _replace(
                head,
                indexed_version=max(version, head.indexed_version),
                indexed_at=time.time(),
                indexed_collection=collection,
            )

        self._update(project_id, update)

    def set_indexing(self, project_id: str, job: dict[str, Any] | None) -> None:
        """Record the index job at work (None: no job)."""
        self._update(project_id, lambda head: _replace(head, indexing=job))

    def update_indexing(
        self, project_id: str, change: Callable[[dict[str, Any] | None], dict[str, Any] | None]
    ) -> None:
        """Rewrite the index job at work from the one recorded (compare-and-swap: no flag is lost)."""
        self._update(project_id, lambda head: _replace(head, indexing=change(head.indexing)))

    def hashes(self, project_id: str) -> dict[ProjectPath, str]:
        """path -> sha256 of every file of the project (read only when its etag is new)."""
        return content_hashes(self._store, project_id)

    def tagged_hashes(self, project_id: str) -> dict[ProjectPath, tuple[str, str]]:
        """path -> (etag, sha256) of every file of the project, as hashes() reads them."""
        return tagged_hashes(self._store, project_id)

    def delete(self, project_id: str) -> None:
        """Remove the project's files, journal and index files."""
        self._store.delete_project(project_id)

    def _tagged_head(self, project_id: str) -> tuple[ProjectHead, str]:
        found = self._store.get_index_file_tagged(project_id, HEAD)
        if found is None:
            self.head(project_id)  # raises, or adopts a legacy project
            found = self._store.get_index_file_tagged(project_id, HEAD)
            if found is None:
                raise ProjectNotFound(project_id)
        return _decode_head(found[0]), found[1]

    def _change(self, project_id: str, version: int) -> Change:
        data = self._store.get_index_file(project_id, change_name(version))
        if data is None:
            raise ProjectNotFound(project_id)  # deleted while being read
        return _decode_change(data)

    def _help_forward(self, project_id: str, version: int) -> None:
        """Move the head to `version`, whose entry exists, unless it is there already."""
        change = self._change(project_id, version)
        head, etag = self._tagged_head(project_id)
        if head.version == version - 1:
            # StaleFile: someone else moved it; the caller reads the head again.
            with contextlib.suppress(StaleFile):
                self._store.put_index_file_if(project_id, HEAD, _encode_head(_advanced(head, change)), etag)

    def _advance(self, project_id: str, change: Change, head: ProjectHead, etag: str) -> None:
        """Move the head from change.version - 1 to change.version, re-reading it when it moved."""
        for _ in range(MAX_ATTEMPTS):
            if head.version >= change.version:
                return  # a helper moved it for us
            try:
                self._store.put_index_file_if(project_id, HEAD, _encode_head(_advanced(head, change)), etag)
                return
            except StaleFile:
                head, etag = self._tagged_head(project_id)  # an index job or a helper wrote it
        raise StaleFile(f"the head of project {project_id!r} (too many concurrent writers; try again)")

    def _update(self, project_id: str, change: Callable[[ProjectHead], ProjectHead | None]) -> None:
        """Apply `change` to the head with compare-and-swap; None from it means nothing to write."""
        for _ in range(MAX_ATTEMPTS):
            head, etag = self._tagged_head(project_id)
            new = change(head)
            if new is None:
                return
            try:
                self._store.put_index_file_if(project_id, HEAD, _encode_head(new), etag)
                return
            except StaleFile:
                continue
        raise StaleFile(f"the head of project {project_id!r} (too many concurrent writers; try again)")


def _advanced(head: ProjectHead, change: Change) -> ProjectHead:
    """The head after `change`: its version, and the change in the tool window when a tool made it."""
    if change.origin != "tool":
        return _replace(head, version=change.version)
    window = (*head.tool_changes, (change.version, change.path))
    dropped = window[:-TOOL_WINDOW]
    start = dropped[-1][0] if dropped else head.tool_window_from
    return _replace(head, version=change.version, tool_changes=window[-TOOL_WINDOW:], tool_window_from=start)


def _replace(head: ProjectHead, **fields: Any) -> ProjectHead:
    return ProjectHead(**{**head.__dict__, **fields})


def _encode_head(head: ProjectHead) -> bytes:
    fields = {**head.__dict__, "tool_changes": [list(item) for item in head.tool_changes]}
    return json.dumps(fields, sort_keys=True).encode()


def _decode_head(data: bytes) -> ProjectHead:
    fields = json.loads(data)
    return ProjectHead(
        version=int(fields["version"]),
        indexed_version=int(fields["indexed_version"]),
        created=float(fields["created"]),
        indexing=fields.get("indexing"),
        tool_changes=tuple(
            (int(version), ProjectPath(str(path))) for version, path in fields.get("tool_changes", [])
        ),
        tool_window_from=int(fields.get("tool_window_from", 0)),
        indexed_at=fields.get("indexed_at"),
        indexed_collection=fields.get("indexed_collection"),
    )


def _encode_change(change: Change) -> bytes:
    return json.dumps(change.__dict__, sort_keys=True).encode()


def _decode_change(data: bytes) -> Change:
    fields = json.loads(data)
    return Change(
        int(fields["version"]), ProjectPath(str(fields["path"])), fields.get("sha256"), str(fields["origin"])
    )
