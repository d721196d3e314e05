"""The symbol index: each file's definitions, imports and entry points, kept beside the project.

    index run:  load_symbol_index ──► SymbolIndexUpdate
                   per listed file: stored etag equal? ── yes ──► the stored entry is kept
                                                       └─ no ──► the indexer's one parse ──► record
                finish(listed) ──► SymbolIndex (entries of files gone from the store dropped)
                save_symbol_index (only when something changed)
    tools:      require_symbol_index(store, project) ──► SymbolIndex, or a ToolError saying how to index

Stored as the index file "symbols.json": {"version": 1, "files": {path: entry}}, where an entry holds the
file's etag, language, symbols, imports and entry points. Keyed by path and etag, so a re-index parses
only the files whose content changed.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import partial
from typing import Any

from reactstep.tools.errors import ToolError
from reactstep.tools.recent import Recent
from reactstep.tools.source.chunking import FileOutline, Import, Symbol
from reactstep.tools.source.entry_points import find_entry_points
from reactstep.tools.source.languages import detect_language
from reactstep.tools.store.objects import ObjectInfo, ObjectStore

logger = logging.getLogger("reactstep.symbol_index")

SYMBOL_INDEX_FILE = "symbols.json"
FORMAT_VERSION = 1
PARSED_KEPT = 4  # parsed indexes kept in the process, by the etag of their bytes
ENCODED_KEPT = 400_000  # encoded entries kept, by path and file etag


@dataclass(frozen=True)
class FileEntry:
    """What one version of one file defines and imports."""

    etag: str
    language: str
    symbols: tuple[Symbol, ...]
    imports: tuple[Import, ...]
    entry_points: tuple[str, ...] = ()


@dataclass(frozen=True)
class SymbolIndex:
    """Every indexed file's entry, by project-relative path."""

    files: dict[str, FileEntry]

    def symbols(self) -> Iterator[Symbol]:
        """Every symbol, by path, then line."""
        for path in sorted(self.files):
            yield from self.files[path].symbols

    def imports(self) -> Iterator[Import]:
        """Every import statement, by path, then line."""
        for path in sorted(self.files):
            yield from self.files[path].imports

    def language_of(self, path: str) -> str:
        """The language of an indexed file ("" when it is not indexed)."""
        entry = self.files.get(path)
        return entry.language if entry is not None else ""


class SymbolIndexUpdate:
    """One indexing run's changes: stored entries kept by etag, files parsed in this run recorded."""

    def __init__(self, previous: SymbolIndex | None) -> None:
        self._previous = previous.files if previous is not None else {}
        self._recorded: dict[str, FileEntry] = {}
        self.changed = previous is None
        self.parsed = 0

    def wants(self, info: ObjectInfo) -> bool:
        """Whether the file must be parsed for the index: its entry is missing or of another version."""
        entry = self._previous.get(info.path)
        return entry is None or entry.etag != info.etag

    def record(self, info: ObjectInfo, text: str, outline: FileOutline) -> None:
        """The entry of a file this run parsed."""
        language = detect_language(info.path) or "text"
        entry_points = find_entry_points(info.path, text, language)
        entry = FileEntry(info.etag, language, tuple(outline.symbols), tuple(outline.imports), entry_points)
        self._recorded[info.path] = entry
        self.parsed += 1
        self.changed = self.changed or self._previous.get(info.path) != entry

    def finish(self, listed: Iterable[ObjectInfo]) -> SymbolIndex:
        """The index of the listed files: recorded entries, else stored ones still of the same version."""
        files: dict[str, FileEntry] = {}
        for info in listed:
            entry = self._recorded.get(info.path) or self._previous.get(info.path)
            if entry is not None and entry.etag == info.etag:
                files[info.path] = entry
        self.changed = self.changed or set(files) != set(self._previous)
        return SymbolIndex(files)

    def finish_paths(self, current: dict[str, ObjectInfo | None]) -> SymbolIndex:
        """The stored index with only the given paths brought up to date (None: the file is gone)."""
        files = dict(self._previous)
        for path, info in current.items():
            entry = self._recorded.get(path) or self._previous.get(path)
            if info is not None and entry is not None and entry.etag == info.etag:
                files[path] = entry
            elif files.pop(path, None) is not None:
                self.changed = True
        return SymbolIndex(files)


def load_symbol_index(store: ObjectStore, project_id: str) -> SymbolIndex | None:
    """The stored index, or None when there is none (or it is of another format version).

    The parse is kept per stored version (its etag, a hash of its bytes), so reading the same index
    again costs one read of the file and no parse: on a large project the parse is most of the time.
    """
    found = store.get_index_file_tagged(project_id, SYMBOL_INDEX_FILE)
    if found is None:
        return None
    data, etag = found
    cached = _PARSED.get(etag)
    if cached is not None:
        return cached
    try:
        document = json.loads(data)
        if document.get("version") != FORMAT_VERSION:
            return None
        index = SymbolIndex({path: _entry_from_json(path, raw) for path, raw in document["files"].items()})
    except (ValueError, KeyError, TypeError, AttributeError):
        # Only a torn or foreign file gets here; the next index run writes a whole one again.
        logger.warning("the symbol index of %s is unreadable; treating it as missing", project_id)
        return None
    _PARSED.put(etag, index)
    return index


def save_symbol_index(store: ObjectStore, project_id: str, index: SymbolIndex) -> None:
    """Store the index as compact JSON, paths sorted, so equal indexes give equal bytes.

    Each entry's JSON is kept by (path, file etag), so saving after a change encodes only the
    entries of the files that changed.
    """
    parts = [f'{{"version":{FORMAT_VERSION},"files":{{']
    for number, path in enumerate(sorted(index.files)):
        entry = index.files[path]
        encoded = _ENCODED.get_or_make((path, entry.etag), partial(_encoded_entry, path, entry))
        parts.append(("," if number else "") + encoded)
    parts.append("}}")
    data = "".join(parts).encode("utf-8")
    store.put_index_file(project_id, SYMBOL_INDEX_FILE, data)
    _PARSED.put(hashlib.md5(data).hexdigest(), index)  # the etag a reader will find (S3 and local)


_PARSED: Recent[str, SymbolIndex] = Recent(PARSED_KEPT)
_ENCODED: Recent[tuple[str, str], str] = Recent(ENCODED_KEPT)


def _encoded_entry(path: str, entry: FileEntry) -> str:
    return json.dumps(path, ensure_ascii=False) + ":" + _compact(_entry_to_json(entry))


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def require_symbol_index(store: ObjectStore, project_id: str, tool_name: str) -> SymbolIndex:
    """The project's index, or a ToolError telling the model (and its user) how to build it."""
    index = load_symbol_index(store, project_id)
    if index is None:
        raise ToolError(not_indexed_message(project_id, f"{tool_name} needs its symbol index"))
    return index


def current_symbol_index(store: ObjectStore, project_id: str, tool_name: str) -> tuple[SymbolIndex, int]:
    """The index without the files changed (or deleted) since it was built, and how many were left out.

    A tool never answers from a version of a file that read_file would not show now.
    """
    index = require_symbol_index(store, project_id, tool_name)
    etags: dict[str, str] = {info.path: info.etag for info in store.list(project_id)}
    current = {path: entry for path, entry in index.files.items() if etags.get(path) == entry.etag}
    return SymbolIndex(current), len(index.files) - len(current)


def stale_note(left_out: int, project_id: str) -> str:
    """The line that tells the model some files were left out as changed since indexing."""
    if not left_out:
        return ""
    files = "1 file that" if left_out == 1 else f"{left_out} files that"
    return (
        f"\n(Left out: {files} changed since the project was indexed; "
        f"POST /api/projects/{project_id}/index brings them back.)"
    )


def not_indexed_message(project_id: str, what: str) -> str:
    """The sentence for a project that was never indexed."""
    return (
        f"project {project_id!r} is not indexed yet ({what}); index it first "
        f"(`reactstep index PATH --project {project_id}` or POST /api/projects/{project_id}/index)"
    )


def _entry_to_json(entry: FileEntry) -> dict[str, Any]:
    return {
        "etag": entry.etag,
        "language": entry.language,
        "symbols": [
            {
                "name": s.name,
                "qualified_name": s.qualified_name,
                "kind": s.kind,
                "line": s.line,
                "end_line": s.end_line,
                "signature": s.signature,
                "docstring": s.docstring,
            }
            for s in entry.symbols
        ],
        "imports": [{"line": i.line, "module": i.module, "names": list(i.names)} for i in entry.imports],
        "entry_points": list(entry.entry_points),
    }


def _entry_from_json(path: str, raw: dict[str, Any]) -> FileEntry:
    symbols = tuple(
        Symbol(
            s["name"],
            s["qualified_name"],
            s["kind"],
            path,
            s["line"],
            s["end_line"],
            s["signature"],
            s["docstring"],
        )
        for s in raw["symbols"]
    )
    imports = tuple(Import(path, i["line"], i["module"], tuple(i["names"])) for i in raw["imports"])
    return FileEntry(raw["etag"], raw["language"], symbols, imports, tuple(raw["entry_points"]))
