"""Project files in object storage: a local directory tree or an S3-compatible bucket.

Every method takes a `ProjectPath`: normalised once where it entered (paths.py), never again here.
Both back-ends report the same `ObjectInfo`; `etag` is the hex MD5 of the
content in both (S3 and R2 give exactly that for single-part uploads, which is all `put`
does; the local store hashes the file when asked). The back-ends live in local.py and s3.py; open_store
in factory.py picks one.

Index files (the symbol index, the project overview) live beside the projects, outside every
project's tree: "<root>/.reactstep-index/<project_id>/<name>". A project id never starts with
'.', so no project can be called ".reactstep-index", and list/get never reach them.
"""

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Protocol

from reactstep.tools.errors import ToolError
from reactstep.tools.store.paths import ROOT, ProjectPath

INDEX_DIR = ".reactstep-index"
_INDEX_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


@dataclass(frozen=True)
class ObjectInfo:
    """One stored file: project-relative path, size in bytes, content MD5 and mtime."""

    path: ProjectPath
    size: int
    etag: str
    modified: float


class ObjectStore(Protocol):
    """What tools may do with a project's files; every path is normalized already.

    get: the bytes, ToolError if missing or a directory. head: metadata or None. put: replace
    the content. put_if: replace it only while its etag is `expected_etag` (None: only while the
    file is absent), in one atomic step, else StaleFile. delete: a missing file is fine. list:
    every file below the directory `prefix`, recursively, sorted by path. check:
    StoreUnavailable if requests would fail.
    get_index_file / put_index_file: a file the indexer keeps for the project, outside its tree
    (None when missing). get_index_file_tagged / put_index_file_if: the same with its etag, and a
    write that lands only while the etag is still `expected_etag` (None: only while absent), else
    StaleFile; the project journal builds on these. delete_index_file: remove one (a missing one is
    fine). delete_project: every file and index file of the project.
    local: whether calls are local disk I/O (answered in microseconds) rather than network
    round trips; the service runs the lightest reads of a local store on its event loop.
    """

    local: bool

    def get(self, project_id: str, path: ProjectPath) -> bytes: ...
    def head(self, project_id: str, path: ProjectPath) -> ObjectInfo | None: ...
    def put(self, project_id: str, path: ProjectPath, data: bytes) -> ObjectInfo: ...
    def put_if(
        self, project_id: str, path: ProjectPath, data: bytes, expected_etag: str | None
    ) -> ObjectInfo: ...
    def delete(self, project_id: str, path: ProjectPath) -> None: ...
    def list(self, project_id: str, prefix: ProjectPath = ROOT) -> Iterator[ObjectInfo]: ...
    def check(self) -> None: ...
    def get_index_file(self, project_id: str, name: str) -> bytes | None: ...
    def put_index_file(self, project_id: str, name: str, data: bytes) -> None: ...
    def get_index_file_tagged(self, project_id: str, name: str) -> tuple[bytes, str] | None: ...
    def put_index_file_if(
        self, project_id: str, name: str, data: bytes, expected_etag: str | None
    ) -> str: ...
    def delete_index_file(self, project_id: str, name: str) -> None: ...
    def delete_project(self, project_id: str) -> None: ...


def check_project_id(project_id: str) -> None:
    """Refuse a project id that could name another directory (the HTTP layer checks too)."""
    # '..' matters as a whole component; inside one name ("v1..2") it is just dots. A leading '.' is
    # refused too: ".reactstep-index" beside the projects holds their index files.
    if project_id.startswith(".") or project_id == "" or any(c in project_id for c in "/\\\x00"):
        raise ValueError(f"invalid project id {project_id!r}")


def check_index_name(name: str) -> None:
    """Refuse an index file name that is not one plain file name."""
    if _INDEX_NAME.fullmatch(name) is None:
        raise ValueError(f"invalid index file name {name!r}")


def directory_error(path: str) -> ToolError:
    """The error for reading a directory as if it were a file."""
    where = path or "the project root"
    return ToolError(f"{where} is a directory, not a file; use list_files to see its files")
