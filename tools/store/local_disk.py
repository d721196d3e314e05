"""The local store's work on disk: an atomic write, the flock that makes a project's writes one at a
time, the walk over a project's files, a file's metadata, and OSError turned into the tools' errors."""

import contextlib
import fcntl
import hashlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

from reactstep.tools.errors import StoreUnavailable, ToolError
from reactstep.tools.store.memos import EtagMemo
from reactstep.tools.store.objects import ObjectInfo, directory_error
from reactstep.tools.store.paths import ProjectPath

TEMP_PREFIX = ".reactstep-tmp-"


def walk_files(base: Path, top: Path) -> Iterator[ProjectPath]:
    """Project-relative paths of the regular files below `top`, not following links."""
    for folder, dirs, files in os.walk(top, followlinks=False):
        here = Path(folder)
        dirs[:] = [name for name in dirs if not (here / name).is_symlink()]
        for name in files:
            full = here / name
            if not name.startswith(TEMP_PREFIX) and not full.is_symlink():
                yield ProjectPath(full.relative_to(base).as_posix())


def write_file(clean: ProjectPath, target: Path, data: bytes) -> ObjectInfo:
    """Create the parents and write the file atomically (the caller holds the project lock)."""
    with local_errors(clean, "write"):
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
        except (FileExistsError, NotADirectoryError) as exc:
            raise ToolError(f"cannot write {clean}: a parent of it is a file") from exc
        write_atomically(target, data)
        stat = target.stat()
    etag = hashlib.md5(data).hexdigest()
    return ObjectInfo(clean, stat.st_size, etag, stat.st_mtime_ns / 1e9)


@contextlib.contextmanager
def project_lock(project_dir: Path) -> Iterator[None]:
    """Hold an exclusive flock on the project directory: one writer at a time, across threads and
    processes (each call opens its own descriptor, and flock locks conflict between descriptors)."""
    try:
        project_dir.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(project_dir, os.O_RDONLY | os.O_DIRECTORY)
    except OSError as exc:
        raise StoreUnavailable(f"local store lock failed: {exc.strerror}") from exc
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        yield
    finally:
        os.close(descriptor)  # closing the descriptor releases the lock


def write_atomically(target: Path, data: bytes, durable: bool = True) -> None:
    """Write a temp file beside `target`, then rename it over `target` in one step (its bytes on
    disk first when `durable`)."""
    fd, temp = tempfile.mkstemp(dir=target.parent, prefix=TEMP_PREFIX)
    try:
        os.fchmod(fd, 0o644)  # mkstemp's 0600 would hide files from other local readers
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            if durable:
                os.fsync(handle.fileno())  # durable before the rename makes it visible
        os.replace(temp, target)
    finally:
        Path(temp).unlink(missing_ok=True)


@contextlib.contextmanager
def local_errors(clean: str, action: str) -> Iterator[None]:
    """Translate OSError: a missing file is the model's to fix, anything else is the store's."""
    try:
        yield
    except (FileNotFoundError, NotADirectoryError) as exc:
        raise ToolError(f"file not found: {clean}") from exc
    except IsADirectoryError as exc:
        raise directory_error(clean) from exc
    except OSError as exc:
        raise StoreUnavailable(f"local store {action} failed: {exc.strerror}") from exc


def local_info(path: ProjectPath, target: Path, etags: EtagMemo) -> ObjectInfo | None:
    """Metadata of a regular file, or None if it is missing or not a file."""
    try:
        stat = target.stat()
        if not target.is_file():
            return None
        digest = etags.etag(target, stat)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        raise StoreUnavailable(f"local store read failed: {exc.strerror}") from exc
    return ObjectInfo(path, stat.st_size, digest, stat.st_mtime_ns / 1e9)
