"""An object store that journals every change it makes to a project's files.

The service hands tools (origin "tool") and the file and sync routes (origin "sync") a
JournaledStore over the real one: each put, put_if and delete that lands is recorded in the
project's journal, bumping its version, and kept in `changes` so the caller can re-index exactly
those paths. Reads pass straight through.

Each change goes through versioned.change_file: under the path's lease, its bytes are kept as a
blob, the file is written, the change journaled and the path's history updated, so writes of one
path from several processes are journaled in the order they reached the store and every version
stays readable. A writer that dies part way is finished by the next one (recovery.py).
"""

from collections.abc import Iterator

from reactstep.tools.projects.journal import Change, Projects
from reactstep.tools.projects.versioned import change_file
from reactstep.tools.store.objects import ObjectInfo, ObjectStore
from reactstep.tools.store.paths import ROOT, ProjectPath, named_file


class JournaledStore:
    """`base` with every change journaled in `projects` under `origin`."""

    def __init__(self, base: ObjectStore, projects: Projects, origin: str) -> None:
        self._base = base
        self._projects = projects
        self._origin = origin
        self.changes: list[Change] = []
        self.local = base.local

    def get(self, project_id: str, path: ProjectPath) -> bytes:
        return self._base.get(project_id, path)

    def head(self, project_id: str, path: ProjectPath) -> ObjectInfo | None:
        return self._base.head(project_id, path)

    def put(self, project_id: str, path: ProjectPath, data: bytes) -> ObjectInfo:
        info, change = change_file(
            self._base, self._projects, project_id, named_file(path), data, self._origin
        )
        return self._recorded(info, change)

    def put_if(
        self, project_id: str, path: ProjectPath, data: bytes, expected_etag: str | None
    ) -> ObjectInfo:
        clean = named_file(path)
        info, change = change_file(
            self._base, self._projects, project_id, clean, data, self._origin, expected_etag
        )
        return self._recorded(info, change)

    def delete(self, project_id: str, path: ProjectPath) -> None:
        _, change = change_file(self._base, self._projects, project_id, named_file(path), None, self._origin)
        if change is not None:
            self.changes.append(change)

    def list(self, project_id: str, prefix: ProjectPath = ROOT) -> Iterator[ObjectInfo]:
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

    def _recorded(self, info: ObjectInfo | None, change: Change | None) -> ObjectInfo:
        assert info is not None and change is not None  # a put always writes and journals
        self.changes.append(change)
        return info
