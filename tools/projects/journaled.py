"""An object store that journals every change it makes to a project's files.

The service hands tools (origin "tool") and the file and sync routes (origin "sync") a
JournaledStore over the real one: each put, put_if and delete that lands is recorded in the
project's journal, bumping its version, and kept in `changes` so the caller can re-index exactly
those paths. Reads pass straight through.

Each change holds the path's lease (leases.py) from its file write through its journal entry, so
writes of one path from several processes are journaled in the order they reached the store. The
file write comes first and its journal entry second; a process that dies between the two leaves
the file changed without an entry (the next sync sees it by its hash, not by the feed).
"""

import hashlib
from collections.abc import Iterator

from reactstep.tools.projects.journal import Change, Projects
from reactstep.tools.projects.leases import holding
from reactstep.tools.store.objects import ObjectInfo, ObjectStore, file_path


class JournaledStore:
    """`base` with every change journaled in `projects` under `origin`."""

    def __init__(self, base: ObjectStore, projects: Projects, origin: str) -> None:
        self._base = base
        self._projects = projects
        self._origin = origin
        self.changes: list[Change] = []
        self.local = base.local

    def get(self, project_id: str, path: str) -> bytes:
        return self._base.get(project_id, path)

    def head(self, project_id: str, path: str) -> ObjectInfo | None:
        return self._base.head(project_id, path)

    def put(self, project_id: str, path: str, data: bytes) -> ObjectInfo:
        clean = file_path(path)
        with holding(self._base, project_id, clean):
            info = self._base.put(project_id, clean, data)
            self._record(project_id, info.path, hashlib.sha256(data).hexdigest())
        return info

    def put_if(self, project_id: str, path: str, data: bytes, expected_etag: str | None) -> ObjectInfo:
        clean = file_path(path)
        with holding(self._base, project_id, clean):
            info = self._base.put_if(project_id, clean, data, expected_etag)
            self._record(project_id, info.path, hashlib.sha256(data).hexdigest())
        return info

    def delete(self, project_id: str, path: str) -> None:
        clean = file_path(path)
        with holding(self._base, project_id, clean):
            if self._base.head(project_id, clean) is None:
                self._base.delete(project_id, clean)  # nothing to journal; the store still checks the path
                return
            self._base.delete(project_id, clean)
            self._record(project_id, clean, None)

    def list(self, project_id: str, prefix: str = "") -> Iterator[ObjectInfo]:
        return self._base.list(project_id, prefix)

    def check(self) -> None:
        self._base.check()

    def get_index_file(self, project_id: str, name: str) -> bytes | None:
        return self._base.get_index_file(project_id, name)

    def put_index_file(self, project_id: str, name: str, data: bytes) -> None:
        self._base.put_index_file(project_id, name, data)

    def get_index_file_tagged(self, project_id: str, name: str) -> tuple[bytes, str] | None:
        return self._base.get_index_file_tagged(project_id, name)

    def put_index_file_if(self, project_id: str, name: str, data: bytes, expected_etag: str | None) -> str:
        return self._base.put_index_file_if(project_id, name, data, expected_etag)

    def delete_index_file(self, project_id: str, name: str) -> None:
        self._base.delete_index_file(project_id, name)

    def delete_project(self, project_id: str) -> None:
        self._base.delete_project(project_id)

    def _record(self, project_id: str, path: str, sha256: str | None) -> None:
        self.changes.append(self._projects.record(project_id, path, sha256, self._origin))
