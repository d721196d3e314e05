"""The local back-end of the object store: files under root/<project_id>/<path>, written atomically."""

import contextlib
import hashlib
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from stat import S_ISREG

from reactstep.tools.errors import StaleFile, StoreUnavailable, ToolError, UnsafePath
from reactstep.tools.store.links import has_link, link_free_stat
from reactstep.tools.store.local_disk import (
    local_errors,
    local_info,
    project_lock,
    walk_files,
    write_atomically,
    write_file,
)
from reactstep.tools.store.memos import ContentMemo, EtagMemo
from reactstep.tools.store.objects import (
    INDEX_DIR,
    RECORDS_DIR,
    ObjectInfo,
    check_index_name,
    check_project_id,
    directory_error,
)
from reactstep.tools.store.paths import ROOT, ProjectPath, named_file

DIRS_KEPT = 10_000


class LocalStore:
    """Files under root/<project_id>/<path>; the embedded default back-end."""

    local = True

    def __init__(self, root: Path) -> None:
        self._root = Path(root)  # created on first write
        self._real_root: Path | None = None  # the root resolved, once it exists
        self._dirs: dict[str, Path] = {}  # project id -> its directory, once the root is resolved
        self._etags = EtagMemo()
        self._contents = ContentMemo()

    def get(self, project_id: str, path: ProjectPath) -> bytes:
        """The file's bytes."""
        if not path:
            self._project_dir(project_id)  # an invalid project id is still refused first
            raise directory_error(path)
        base = self._project_dir(project_id)
        if (known := self._known_contents(f"{base}/{path}")) is not None:
            return known
        found = link_free_stat(base, path)
        if found is not None and S_ISREG(found.st_mode):  # the common case, in plain strings
            with local_errors(path, "read"):
                return self._contents.read(f"{base}/{path}", found)
        target = self._resolve(project_id, path)  # a link on the way, or nothing there: as always
        with local_errors(path, "read"):
            return self._contents.read(str(target))

    def _known_contents(self, name: str) -> bytes | None:
        """The bytes kept for this very file (inode, size, times) from a read that found no link on
        its way. One lstat: if a folder on the way became a link since, it leads to the same file,
        whose bytes were served already, so nothing new can leak."""
        try:
            stat = os.lstat(name)
        except OSError:
            return None
        return self._contents.known(name, stat) if S_ISREG(stat.st_mode) else None

    def head(self, project_id: str, path: ProjectPath) -> ObjectInfo | None:
        """The file's metadata, or None."""
        target = self._resolve(project_id, path)
        return local_info(path, target, self._etags) if path else None

    def put(self, project_id: str, path: ProjectPath, data: bytes) -> ObjectInfo:
        """Write atomically, so readers see the old content or the new, never a mix."""
        clean = named_file(path)
        target = self._resolve(project_id, clean)
        with project_lock(self._project_dir(project_id)):
            return write_file(clean, target, data)

    def put_if(
        self, project_id: str, path: ProjectPath, data: bytes, expected_etag: str | None
    ) -> ObjectInfo:
        """Write only if the file's MD5 is still `expected_etag` (None: only if it is absent)."""
        clean = named_file(path)
        target = self._resolve(project_id, clean)
        # Every write and delete takes this lock, so nothing lands between the check and the rename.
        with project_lock(self._project_dir(project_id)):
            current = local_info(clean, target, self._etags)
            if (current.etag if current else None) != expected_etag:
                raise StaleFile(clean)
            return write_file(clean, target, data)

    def delete(self, project_id: str, path: ProjectPath) -> None:
        """Remove the file; missing files and directories are left alone, as in S3."""
        clean = named_file(path)
        target = self._resolve(project_id, clean)
        lock = project_lock(self._project_dir(project_id))
        with lock, contextlib.suppress(ToolError), local_errors(clean, "delete"):
            if not target.is_dir():
                target.unlink()

    def list(self, project_id: str, prefix: ProjectPath = ROOT) -> Iterator[ObjectInfo]:
        """Every regular file below `prefix`, sorted; symlinks and temp files are skipped."""
        base = self._project_dir(project_id)
        top = self._resolve(project_id, prefix)
        # Collect names first so the order is global, then stat and hash lazily.
        paths = sorted(walk_files(base, top)) if top.is_dir() else []
        return (info for rel in paths if (info := local_info(rel, base / rel, self._etags)) is not None)

    def check(self) -> None:
        """The root must be a writable directory."""
        try:
            self._root.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreUnavailable(f"local store root unusable: {exc.strerror}") from exc
        if not os.access(self._root, os.W_OK | os.X_OK):
            raise StoreUnavailable("local store root is not writable")

    def get_index_file(self, project_id: str, name: str) -> bytes | None:
        """The index file's bytes, or None when it was never written."""
        target = self._index_path(project_id, name)
        try:
            return target.read_bytes()
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as exc:
            raise StoreUnavailable(f"local store read failed: {exc.strerror}") from exc

    def put_index_file(self, project_id: str, name: str, data: bytes) -> None:
        """Replace the index file atomically."""
        target = self._index_path(project_id, name)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            write_atomically(target, data)
        except OSError as exc:
            raise StoreUnavailable(f"local store write failed: {exc.strerror}") from exc

    def get_index_file_tagged(self, project_id: str, name: str) -> tuple[bytes, str] | None:
        """The index file's bytes and MD5, or None when it was never written."""
        data = self.get_index_file(project_id, name)
        return None if data is None else (data, hashlib.md5(data).hexdigest())

    def put_index_file_if(self, project_id: str, name: str, data: bytes, expected_etag: str | None) -> str:
        """Replace the index file only while its MD5 is `expected_etag` (None: while absent)."""
        target = self._index_path(project_id, name)
        with project_lock(target.parent):
            found = self.get_index_file(project_id, name)
            if (hashlib.md5(found).hexdigest() if found is not None else None) != expected_etag:
                raise StaleFile(name)
            try:
                write_atomically(target, data)
            except OSError as exc:
                raise StoreUnavailable(f"local store write failed: {exc.strerror}") from exc
        return hashlib.md5(data).hexdigest()

    def delete_index_file(self, project_id: str, name: str) -> None:
        """Remove one index file; a missing one is fine."""
        target = self._index_path(project_id, name)
        try:
            target.unlink(missing_ok=True)
        except OSError as exc:
            raise StoreUnavailable(f"local store delete failed: {exc.strerror}") from exc

    def delete_project(self, project_id: str) -> None:
        """Remove the project's directory and its index files."""
        project_dir = self._project_dir(project_id)
        index_dir = self._root.resolve() / INDEX_DIR / project_id
        try:
            with project_lock(project_dir):
                for folder in (project_dir, index_dir):
                    # Empty first and remove last: the lock's own directory goes after the lock is let go.
                    for child in folder.iterdir() if folder.is_dir() else ():
                        if child.is_dir() and not child.is_symlink():
                            shutil.rmtree(child)
                        else:
                            child.unlink()
            for folder in (project_dir, index_dir):
                with contextlib.suppress(FileNotFoundError, OSError):
                    folder.rmdir()
        except OSError as exc:
            raise StoreUnavailable(f"local store delete failed: {exc.strerror}") from exc

    def get_record(self, name: str) -> tuple[bytes, str] | None:
        """The record's bytes and MD5, or None when there is none."""
        target = self._record_path(name)
        try:
            data = target.read_bytes()
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as exc:
            raise StoreUnavailable(f"local store read failed: {exc.strerror}") from exc
        return data, hashlib.md5(data).hexdigest()

    def put_record_if(self, name: str, data: bytes, expected_etag: str | None) -> str:
        """Replace the record only while its MD5 is `expected_etag` (None: while absent)."""
        target = self._record_path(name)
        with project_lock(target.parent):  # which makes the folder on first use
            found = self.get_record(name)
            if (found[1] if found is not None else None) != expected_etag:
                raise StaleFile(name)
            try:
                # Not synced to disk: a record lost to a crash is a retry that runs again, no data lost.
                write_atomically(target, data, durable=False)
            except OSError as exc:
                raise StoreUnavailable(f"local store write failed: {exc.strerror}") from exc
        return hashlib.md5(data).hexdigest()

    def delete_record(self, name: str) -> None:
        """Remove one record; a missing one is fine."""
        try:
            self._record_path(name).unlink(missing_ok=True)
        except OSError as exc:
            raise StoreUnavailable(f"local store delete failed: {exc.strerror}") from exc

    def _record_path(self, name: str) -> Path:
        """root/.reactstep-records/<name>, beside the projects and inside none."""
        check_index_name(name)
        return self._root / RECORDS_DIR / name

    def _index_path(self, project_id: str, name: str) -> Path:
        """root/.reactstep-index/<project_id>/<name>, beside the projects."""
        check_project_id(project_id)
        check_index_name(name)
        return self._root / INDEX_DIR / project_id / name

    def _project_dir(self, project_id: str) -> Path:
        """root/<project_id> with the root resolved (the project dir itself must not be a link)."""
        if (known := self._dirs.get(project_id)) is not None:
            return known
        check_project_id(project_id)
        if self._real_root is None:
            if not self._root.exists():
                return self._root.resolve() / project_id
            self._real_root = self._root.resolve()
        if len(self._dirs) >= DIRS_KEPT:
            self._dirs.clear()
        found = self._dirs[project_id] = self._real_root / project_id
        return found

    def _resolve(self, project_id: str, clean: str) -> Path:
        """The real path of `clean`, refused unless it stays inside the project directory."""
        base = self._project_dir(project_id)
        if not has_link(base, clean):
            return base / clean  # `clean` has no '.' or '..' parts: with no link on the way, it is real
        try:
            real = (base / clean).resolve()
        except (OSError, RuntimeError) as exc:  # a symlink loop
            raise UnsafePath(f"path {clean!r} cannot be resolved") from exc
        if real != base and base not in real.parents:
            raise UnsafePath(f"path {clean!r} leads outside the project")
        return real
