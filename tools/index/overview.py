"""The project overview: a short markdown map of the project, rebuilt at the end of every index run.

    listed files + symbol index ──► # Project overview
                                     ## Languages        files per language
                                     ## Layout           top-level folders (file counts) and files
                                     ## Entry points     __main__ guards, main functions, scripts, bin
                                     ## Most imported    project modules with the most distinct importers
                                     ## Tests            folders, naming, runners (conventions.py)
                                     ## Conventions      naming style, docstrings, configuration
                               ──► index file "overview.md" (react_step and project_overview read it)

Built only from the file listing and the symbol index, every list sorted and capped, so the same project
always gives the same bytes.
"""

from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import PurePosixPath

from reactstep.tools.index.conventions import describe_conventions, describe_tests
from reactstep.tools.index.symbols import SymbolIndex
from reactstep.tools.source.languages import detect_language
from reactstep.tools.source.module_paths import ModuleResolver
from reactstep.tools.store.objects import ObjectInfo, ObjectStore

__all__ = ["OVERVIEW_FILE", "build_overview", "load_overview", "most_imported", "save_overview"]

OVERVIEW_FILE = "overview.md"
MAX_LANGUAGES = 12
MAX_LAYOUT_ENTRIES = 30
MAX_SUBFOLDERS = 8
MAX_ENTRY_POINTS = 15
MAX_MOST_IMPORTED = 10


def load_overview(store: ObjectStore, project_id: str) -> str | None:
    """The stored overview, or None when the project was never indexed."""
    data = store.get_index_file(project_id, OVERVIEW_FILE)
    return data.decode("utf-8", errors="replace") if data is not None else None


def save_overview(
    store: ObjectStore, project_id: str, listed: Sequence[ObjectInfo], index: SymbolIndex
) -> None:
    """Build the overview of the listed files and store it beside the symbol index."""
    text = build_overview([info.path for info in listed], index)
    store.put_index_file(project_id, OVERVIEW_FILE, text.encode("utf-8"))


def build_overview(paths: Iterable[str], index: SymbolIndex) -> str:
    """The overview markdown of a project holding `paths`."""
    paths = sorted(paths)
    symbols = sum(len(entry.symbols) for entry in index.files.values())
    sections = [
        ("Languages", _language_lines(paths)),
        ("Layout", _layout_lines(paths)),
        ("Entry points", _entry_point_lines(index)),
        ("Most imported modules", _most_imported_lines(index)),
        ("Tests", describe_tests(paths)),
        ("Conventions", describe_conventions(paths, index)),
    ]
    parts = ["# Project overview", f"{_count(len(paths), 'file')}, {_count(symbols, 'symbol')} indexed."]
    parts.extend(f"## {title}\n" + "\n".join(lines) for title, lines in sections)
    return "\n\n".join(parts) + "\n"


def most_imported(index: SymbolIndex) -> list[tuple[str, int]]:
    """Project files by how many other files import them, most first, then by path."""
    resolver = ModuleResolver(index.files)
    importers: dict[str, set[str]] = {}
    for statement in index.imports():
        for target in resolver.targets(statement, index.language_of(statement.path)):
            if target.path != statement.path:
                importers.setdefault(target.path, set()).add(statement.path)
    return sorted(
        ((path, len(found)) for path, found in importers.items()), key=lambda item: (-item[1], item[0])
    )


def _language_lines(paths: list[str]) -> list[str]:
    counts = Counter(language for path in paths if (language := detect_language(path)) is not None)
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    lines = [f"- {language}: {_count(n, 'file')}" for language, n in ranked[:MAX_LANGUAGES]]
    return _capped(lines, len(ranked), MAX_LANGUAGES, "languages") or ["- No source files."]


def _layout_lines(paths: list[str]) -> list[str]:
    folders: Counter[str] = Counter()
    subfolders: dict[str, set[str]] = {}
    files = []
    for path in paths:
        parts = PurePosixPath(path).parts
        if len(parts) == 1:
            files.append(f"- {path}")
            continue
        folders[parts[0]] += 1
        if len(parts) > 2:
            subfolders.setdefault(parts[0], set()).add(parts[1])
    lines = [
        f"- {name}/ ({_count(n, 'file')}{_subfolders(subfolders.get(name, set()))})"
        for name, n in sorted(folders.items())
    ]
    lines += files
    return _capped(lines[:MAX_LAYOUT_ENTRIES], len(lines), MAX_LAYOUT_ENTRIES, "entries") or [
        "- The project is empty."
    ]


def _subfolders(names: set[str]) -> str:
    if not names:
        return ""
    shown = sorted(names)[:MAX_SUBFOLDERS]
    more = f", +{len(names) - len(shown)} more" if len(names) > len(shown) else ""
    return "; " + ", ".join(f"{name}/" for name in shown) + more


def _entry_point_lines(index: SymbolIndex) -> list[str]:
    found = [(path, 0, text) for path, entry in index.files.items() for text in entry.entry_points]
    found += [
        (s.path, s.line, f"`{s.signature.splitlines()[0] if s.signature else s.name}`")
        for s in index.symbols()
        if s.name == "main" and (s.qualified_name == "main" or "static" in s.signature)
    ]
    found.sort()
    lines = [f"- {path}{f':{line}' if line else ''}: {text}" for path, line, text in found[:MAX_ENTRY_POINTS]]
    return _capped(lines, len(found), MAX_ENTRY_POINTS, "entry points") or ["- None found."]


def _most_imported_lines(index: SymbolIndex) -> list[str]:
    ranked = most_imported(index)
    lines = [f"- {path}: imported by {_count(n, 'file')}" for path, n in ranked[:MAX_MOST_IMPORTED]]
    return _capped(lines, len(ranked), MAX_MOST_IMPORTED, "modules") or ["- No file imports another."]


def _capped(lines: list[str], total: int, cap: int, noun: str) -> list[str]:
    """The lines, with a last one saying how many more there are when `total` passed `cap`."""
    return lines + ([f"- ...and {total - cap} more {noun}"] if total > cap else [])


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
