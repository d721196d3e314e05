"""Copy a local source tree into the object store: .gitignore respected, binary and oversize skipped."""

import hashlib
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pathspec

from reactstep.tools.errors import UnsafePath
from reactstep.tools.store.objects import ObjectStore

ALWAYS_SKIPPED_DIRS = {".git", ".hg", ".svn"}


@dataclass
class UploadReport:
    """What an upload did, file by file, in counts."""

    uploaded: int = 0
    unchanged: int = 0
    ignored: int = 0
    binary: int = 0
    oversize: int = 0
    bytes_uploaded: int = 0

    def summary(self) -> str:
        """One line for the terminal."""
        return (
            f"uploaded {self.uploaded} files ({self.bytes_uploaded} bytes), "
            f"{self.unchanged} unchanged, skipped {self.ignored} ignored, "
            f"{self.binary} binary, {self.oversize} oversize"
        )


def upload_tree(
    root: Path,
    project_id: str,
    store: ObjectStore,
    max_file_bytes: int,
    progress: Callable[[str], None] | None = None,
) -> UploadReport:
    """Upload every kept file under root to the project; unchanged files are not sent again."""
    report = UploadReport()
    for path, relative in _walk(root, report):
        if path.stat().st_size > max_file_bytes:
            report.oversize += 1
            continue
        data = path.read_bytes()
        if b"\x00" in data[:8192]:
            report.binary += 1
            continue
        try:
            existing = store.head(project_id, relative)
        except UnsafePath:
            report.ignored += 1  # a name the store refuses, such as one with a backslash
            continue
        if existing is not None and existing.etag == hashlib.md5(data).hexdigest():
            report.unchanged += 1
            continue
        store.put(project_id, relative, data)
        report.uploaded += 1
        report.bytes_uploaded += len(data)
        if progress is not None:
            progress(relative)
    return report


def _walk(root: Path, report: UploadReport) -> Iterator[tuple[Path, str]]:
    """Files under root that no .gitignore on their way excludes, as (path, POSIX relative path)."""
    specs: dict[Path, pathspec.GitIgnoreSpec] = {}
    for directory, subdirs, files in os.walk(root):
        here = Path(directory)
        _load_ignore_file(here, specs)
        kept_dirs = []
        for name in sorted(subdirs):
            if name in ALWAYS_SKIPPED_DIRS or _ignored(here / name, specs, is_dir=True):
                report.ignored += 0 if name in ALWAYS_SKIPPED_DIRS else 1
                continue
            kept_dirs.append(name)
        subdirs[:] = kept_dirs
        for name in sorted(files):
            path = here / name
            if path.is_symlink() or _ignored(path, specs, is_dir=False):
                report.ignored += 1
                continue
            yield path, path.relative_to(root).as_posix()


def _load_ignore_file(directory: Path, specs: dict[Path, pathspec.GitIgnoreSpec]) -> None:
    ignore_file = directory / ".gitignore"
    if ignore_file.is_file():
        lines = ignore_file.read_text(errors="replace").splitlines()
        specs[directory] = pathspec.GitIgnoreSpec.from_lines(lines)


def _ignored(path: Path, specs: dict[Path, pathspec.GitIgnoreSpec], is_dir: bool) -> bool:
    for base, spec in specs.items():
        if base in path.parents:
            relative = path.relative_to(base).as_posix() + ("/" if is_dir else "")
            if spec.match_file(relative):
                return True
    return False
