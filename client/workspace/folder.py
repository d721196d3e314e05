"""The local side of a sync: a folder's files as {path: sha256}, and what was last agreed with the server.

scan(DIR) ─► every file no .gitignore on its way excludes (.git, .reactstep and symlinks skipped;
    binary, oversize and names the server refuses left out and counted) ─► Manifest {path: sha256};
    a file whose (size, mtime_ns) is what the last sync recorded is not read again (one changed
    within two seconds of a save is recorded without its mtime, so it is read next time)
DIR/.reactstep/sync-<project>.json ─► SyncState {server, created, version, files: {path: [sha256, size,
    mtime_ns]}} written atomically once a sync or pull finished: which server and which incarnation of
    the project (its `created`) it describes; client/workspace/sync_state.py decides whether it still applies
    (without it the server's version is unknown: base_version null, every tool write the server ever
    made is checked against the folder). A state of another format is not read (OtherStateFormat).
"""

import hashlib
import json
import os
import re
import time
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from reactstep.client.workspace.gitignore import IgnoreRules
from reactstep.client.workspace.paths import path_problem

STATE_DIR = ".reactstep"
ALWAYS_SKIPPED_DIRS = {".git", ".hg", ".svn", STATE_DIR}
BINARY_SNIFF_BYTES = 8192
STATE_FORMAT = 2  # 1, before the state named the project's incarnation, is no longer read
RACY_WINDOW_NS = 2_000_000_000  # a file changed this close to a save may change again unseen in its mtime


@dataclass(frozen=True)
class Entry:
    """One file as last seen: its content hash and the stat that lets a later scan skip reading it."""

    sha256: str
    size: int
    mtime_ns: int


@dataclass
class Scan:
    """The folder's files that take part in a sync, and what was left out."""

    files: dict[str, Entry] = field(default_factory=dict)
    ignored: int = 0
    binary: int = 0
    oversize: int = 0
    unsafe: list[str] = field(default_factory=list)

    @property
    def manifest(self) -> dict[str, str]:
        """path -> sha256, the body of a sync."""
        return {path: entry.sha256 for path, entry in self.files.items()}

    def skipped(self) -> str:
        """What the scan left out, for a summary line."""
        text = f"skipped {self.ignored} ignored, {self.binary} binary, {self.oversize} oversize"
        return text + (f", {len(self.unsafe)} with names the server refuses" if self.unsafe else "")


@dataclass
class SyncState:
    """What the folder and the server agreed on at `version` (None: never synced with this server)."""

    server: str
    version: int | None = None
    files: dict[str, Entry] = field(default_factory=dict)
    created: float | None = None  # the project incarnation it describes (None: the server did not say)


class OtherStateFormat(Exception):
    """A saved state of a format this version does not read."""

    def __init__(self, path: Path, found: object) -> None:
        super().__init__(
            f"{path} is a sync state of format {found}; this reactstep reads format {STATE_FORMAT}"
        )


def scan(root: Path, max_file_bytes: int, known: dict[str, Entry] | None = None) -> Scan:
    """The files under root as a Scan; `known` entries whose size and mtime still match are reused."""
    known = known or {}
    result = Scan()
    for path, relative in _walk(root, result):
        stat = path.stat()
        if stat.st_size > max_file_bytes:
            result.oversize += 1
            continue
        relative = _nfc_name(root, path, relative)
        if path_problem(relative) is not None:
            result.unsafe.append(relative)
            continue
        previous = known.get(relative)
        if previous is not None and (previous.size, previous.mtime_ns) == (stat.st_size, stat.st_mtime_ns):
            result.files[relative] = previous
            continue
        data = path.read_bytes()
        if b"\x00" in data[:BINARY_SNIFF_BYTES]:
            result.binary += 1
            continue
        result.files[relative] = Entry(hashlib.sha256(data).hexdigest(), len(data), stat.st_mtime_ns)
    return result


def entry_of(path: Path, data: bytes) -> Entry:
    """The entry of a file just written with `data`."""
    return Entry(hashlib.sha256(data).hexdigest(), len(data), path.stat().st_mtime_ns)


def state_path(root: Path, project_id: str) -> Path:
    """Where the folder keeps its sync state for one project."""
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", project_id)
    return root / STATE_DIR / f"sync-{safe}.json"


def load_state(root: Path, project_id: str) -> SyncState | None:
    """The state last saved for this project, whichever server it names; None if none or unreadable;
    OtherStateFormat when it is of another format."""
    state_file = state_path(root, project_id)
    try:
        raw = json.loads(state_file.read_text())
        if not isinstance(raw, dict):
            return None
        if raw.get("format") != STATE_FORMAT:
            raise OtherStateFormat(state_file, raw.get("format"))
        files = {path: Entry(*fields) for path, fields in raw["files"].items()}
        created = raw.get("created")
        version = raw["version"]
        return SyncState(
            str(raw["server"]),
            None if version is None else int(version),
            files,
            None if created is None else float(created),
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None


def save_state(root: Path, project_id: str, state: SyncState) -> None:
    """Write the state atomically (a crash leaves the old one or the new one, never half of either)."""
    target = state_path(root, project_id)
    target.parent.mkdir(exist_ok=True)
    recent = time.time_ns() - RACY_WINDOW_NS
    body = {
        "format": STATE_FORMAT,
        "server": state.server,
        "created": state.created,
        "version": state.version,
        "files": {  # mtime 0: read the file again next time, its mtime cannot be trusted yet
            path: [e.sha256, e.size, e.mtime_ns if e.mtime_ns < recent else 0]
            for path, e in sorted(state.files.items())
        },
    }
    partial = target.with_name(target.name + ".partial")
    partial.write_text(json.dumps(body, separators=(",", ":")))
    os.replace(partial, target)


def write_file(root: Path, relative: str, data: bytes) -> Entry:
    """Write a file under root atomically (parents created); its new entry."""
    target = root / relative
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f".{target.name}.reactstep-partial")
    partial.write_bytes(data)
    os.replace(partial, target)
    return entry_of(target, data)


def remove_file(root: Path, relative: str) -> None:
    """Remove a file under root and the folders it leaves empty (never root itself)."""
    target = root / relative
    target.unlink(missing_ok=True)
    parent = target.parent
    while parent != root and parent.is_dir() and not any(parent.iterdir()):
        parent.rmdir()
        parent = parent.parent


def _nfc_name(root: Path, path: Path, relative: str) -> str:
    """The NFC form the server takes of a name the disk holds in another form (macOS writes NFD),
    when the disk finds the same file by it (so the folder reads and writes it by that name);
    else the name as it is, which the server refuses (counted as unsafe). Two names that differ
    only by case or normalisation both go into the manifest: the server refuses it naming both."""
    name = unicodedata.normalize("NFC", relative)
    if name == relative:
        return relative
    try:
        return name if os.path.samefile(root / name, path) else relative
    except OSError:
        return relative


def _walk(root: Path, result: Scan) -> Iterator[tuple[Path, str]]:
    """Files under root that no .gitignore on their way excludes, as (path, POSIX relative path)."""
    specs: dict[Path, IgnoreRules] = {}
    for directory, subdirs, files in os.walk(root):
        here = Path(directory)
        _load_ignore_file(here, specs)
        kept_dirs = []
        for name in sorted(subdirs):
            if name in ALWAYS_SKIPPED_DIRS:
                continue
            if _ignored(here / name, specs, is_dir=True):
                result.ignored += 1
                continue
            kept_dirs.append(name)
        subdirs[:] = kept_dirs
        for name in sorted(files):
            path = here / name
            if path.is_symlink() or _ignored(path, specs, is_dir=False):
                result.ignored += 1
                continue
            yield path, path.relative_to(root).as_posix()


def _load_ignore_file(directory: Path, specs: dict[Path, IgnoreRules]) -> None:
    ignore_file = directory / ".gitignore"
    if ignore_file.is_file():
        lines = ignore_file.read_text(errors="replace").splitlines()
        specs[directory] = IgnoreRules.from_lines(lines)


def _ignored(path: Path, specs: dict[Path, IgnoreRules], is_dir: bool) -> bool:
    for base, spec in specs.items():
        if base in path.parents:
            relative = path.relative_to(base).as_posix() + ("/" if is_dir else "")
            if spec.ignores(relative):
                return True
    return False
