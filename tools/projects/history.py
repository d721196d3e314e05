"""Per path, which bytes it held from which version on, so "P at version N" is one read.

    history-<hash of the path>.json   {"path": P, "floor": F,
                                       "entries": [[version, sha256 | null, time], ...],
                                       "loose": [[sha256, since], ...]}

At version N >= F the path held the bytes of the last entry with version <= N (none, or a null
sha256: it did not exist). N < F is not kept: before the path's first kept version, or pruned.
Retention prunes the oldest entries unless they were replaced within the window or are among the
path's last KEEP_LAST; a pruned entry's sha256 goes to `loose`, where garbage collection finds it.
`etag` is the file's etag after the last entry, so a change the journal missed shows at once.
The file is written with compare-and-swap under the path's lease, after the journal entry.
"""

import bisect
import hashlib
import json
from dataclasses import dataclass, field

from reactstep.tools.errors import VersionNotKept
from reactstep.tools.store.objects import ObjectStore
from reactstep.tools.store.paths import ProjectPath

KEEP_LAST = 100  # the last versions of each path are kept whatever their age

Entry = tuple[int, str | None, float]  # (version, sha256 or None: absent, when it was written)


@dataclass
class PathHistory:
    """The kept versions of one path (see the module docstring)."""

    path: ProjectPath
    floor: int
    entries: list[Entry] = field(default_factory=list)
    loose: list[tuple[str, float]] = field(default_factory=list)
    etag: str | None = None  # the file's etag after the last entry: a different one means it changed since

    @property
    def last_version(self) -> int:
        """The version of the last entry (the floor when there is none)."""
        return self.entries[-1][0] if self.entries else self.floor

    @property
    def last_sha256(self) -> str | None:
        """The sha256 the path holds after its last entry (None: absent)."""
        return self.entries[-1][1] if self.entries else None

    def sha256_at(self, version: int) -> str | None:
        """The sha256 of the bytes the path held at `version`; None: absent; VersionNotKept."""
        if version < self.floor:
            raise VersionNotKept(self.path, version)
        at = bisect.bisect_right([entry[0] for entry in self.entries], version)
        return self.entries[at - 1][1] if at else None

    def append(self, version: int, sha256: str | None, now: float) -> None:
        """The path holds `sha256` from `version` on (versions come in increasing order)."""
        if version > self.last_version or not self.entries:
            self.entries.append((version, sha256, now))

    def prune(self, window_s: float, now: float) -> list[str]:
        """Drop the entries retention no longer keeps; their sha256s go to `loose` and are returned."""
        cutoff = now - window_s
        first_kept = max(0, len(self.entries) - KEEP_LAST)
        for index in range(first_kept):
            if self.entries[index + 1][2] >= cutoff:  # replaced within the window: kept
                first_kept = index
                break
        dropped = self.entries[:first_kept]
        if not dropped:
            return []
        self.entries = self.entries[first_kept:]
        self.floor = self.entries[0][0]
        gone = [sha for _, sha, _ in dropped if sha is not None]
        self.loose.extend((sha, now) for sha in gone)
        return gone

    def kept_sha256s(self) -> set[str]:
        """Every sha256 a kept version of the path needs."""
        return {sha for _, sha, _ in self.entries if sha is not None}


def history_name(path: str) -> str:
    """The index file holding the history of one path."""
    return f"history-{hashlib.sha256(path.encode()).hexdigest()[:40]}.json"


def load_history(
    store: ObjectStore, project_id: str, path: ProjectPath
) -> tuple[PathHistory | None, str | None]:
    """The path's history and its etag; (None, None) when the path has none yet."""
    found = store.get_index_file_tagged(project_id, history_name(path))
    if found is None:
        return None, None
    fields = json.loads(found[0])
    history = PathHistory(
        path=ProjectPath(str(fields["path"])),
        floor=int(fields["floor"]),
        entries=[(int(version), sha, float(when)) for version, sha, when in fields["entries"]],
        loose=[(str(sha), float(since)) for sha, since in fields.get("loose", [])],
        etag=fields.get("etag"),
    )
    return history, found[1]


def save_history(store: ObjectStore, project_id: str, history: PathHistory, etag: str | None) -> str:
    """Write the history only while its etag is still `etag` (None: only while absent), else StaleFile."""
    body = {
        "path": history.path,
        "floor": history.floor,
        "entries": [list(entry) for entry in history.entries],
        "loose": [list(item) for item in history.loose],
        "etag": history.etag,
    }
    data = json.dumps(body, separators=(",", ":")).encode()
    return store.put_index_file_if(project_id, history_name(history.path), data, etag)
