"""grep: a regular expression over the project's file contents, printed the way ripgrep does.

    pattern ─► RE2 (linear time: no pattern can hang a worker) ─► invalid? ToolError saying why
    path, glob ─► the files to search; oversize ones are skipped unread
    map_files (a small thread pool) ─► per file: binary? else the matching line numbers
    ─► "Found N matches in M files", then `path:line:text` for matches and `path-line-text`
       for context, groups split by `--`, cut at max_results with "found N, showing K"

Lines are numbered as read_file numbers them, so a hit can be read on with read_file.
"""

from dataclasses import dataclass, field
from functools import partial
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from reactstep.tools.errors import InvalidRegex, ToolError
from reactstep.tools.folders import files_at
from reactstep.tools.matching.globs import as_list, compile_globs
from reactstep.tools.matching.regex import compile_re2
from reactstep.tools.parallel_read import map_files
from reactstep.tools.registry import ToolContext, ToolSpec
from reactstep.tools.store.objects import ObjectInfo

MAX_RESULTS = 500
MAX_LINE_CHARS = 300
BINARY_SNIFF_BYTES = 8192


class GrepArgs(BaseModel):
    """Arguments of grep."""

    model_config = ConfigDict(extra="forbid")

    pattern: str = Field(
        min_length=1,
        max_length=1000,
        description="Regular expression to find in each line (RE2 syntax, as in ripgrep), e.g. 'def \\w+'.",
    )
    path: str = Field("", description="Folder or file to search, relative to the project root; '' is all.")
    glob: str | list[str] | None = Field(
        None,
        description="Only search files whose path from the project root matches, e.g. '*.py' or "
        "['src/**/*.ts', '!**/*.test.ts'].",
    )
    case_sensitive: bool = Field(
        False, description="Match letter case exactly; by default 'todo' finds 'TODO'."
    )
    context_lines: int = Field(0, ge=0, le=10, description="Lines to show before and after each match.")
    max_results: int = Field(50, ge=1, le=MAX_RESULTS, description="Most matching lines to show.")


@dataclass(frozen=True)
class FileHits:
    """What one file holds for the search: binary, or its matching lines and their context."""

    path: str
    binary: bool = False
    line_count: int = 0
    hits: tuple[int, ...] = ()
    text: dict[int, str] = field(default_factory=dict)  # line index -> text, hits and context only


@dataclass
class Tally:
    """The search so far: counts over every file, output lines for the shown matches."""

    matches: int = 0
    files: int = 0
    shown: int = 0
    binary: int = 0
    output: list[str] = field(default_factory=list)


def grep(args: GrepArgs, context: ToolContext) -> str:
    """Search the files under a path for lines matching a regular expression."""
    regex = compile_regex(args.pattern, args.case_sensitive)
    chosen = _files_to_search(context, args)
    limit = context.limits.file_max_bytes
    readable = [info.path for info in chosen if info.size <= limit]
    scan = partial(_scan, regex, args.context_lines)
    tally = Tally()
    for hits in map_files(context, readable, scan):
        _add(tally, hits, args)
    return _render(tally, searched=len(readable), oversize=len(chosen) - len(readable), limit=limit)


def _files_to_search(context: ToolContext, args: GrepArgs) -> list[ObjectInfo]:
    """The files under the path whose paths match the glob; ToolError if the glob matches none."""
    folder, objects = files_at(context, args.path)
    patterns = as_list(args.glob)
    if not patterns:
        return objects
    globs = compile_globs(patterns)
    chosen = [info for info in objects if globs.matches(info.path)]
    if not chosen:
        where = folder or "the project"
        raise ToolError(f"no file in {where} matches the glob {args.glob!r}; try find_files to see the paths")
    return chosen


def compile_regex(pattern: str, case_sensitive: bool) -> Any:
    """An RE2 regex for the pattern; a ToolError says why a pattern is not valid."""
    try:
        return compile_re2(pattern, case_sensitive=case_sensitive, never_capture=True)
    except InvalidRegex as exc:
        raise ToolError(
            f"invalid regex {pattern!r} ({exc.reason}); grep uses RE2 syntax, as ripgrep does: no "
            "lookaround or backreferences; escape ( ) [ ] { } . * + ? | with a backslash to match them"
        ) from exc


def _scan(regex: Any, context_lines: int, path: str, data: bytes) -> FileHits:
    """The matching lines of one file and the lines around them (runs in the read pool)."""
    if b"\x00" in data[:BINARY_SNIFF_BYTES]:
        return FileHits(path, binary=True)
    lines = data.decode("utf-8", errors="replace").splitlines()
    hits = tuple(index for index, line in enumerate(lines) if regex.search(line))
    wanted = {
        near
        for index in hits
        for near in range(max(index - context_lines, 0), min(index + context_lines + 1, len(lines)))
    }
    return FileHits(path, False, len(lines), hits, {index: _clip(lines[index]) for index in wanted})


def _clip(line: str) -> str:
    """A line cut to MAX_LINE_CHARS, so one minified line cannot fill the observation."""
    return line if len(line) <= MAX_LINE_CHARS else line[:MAX_LINE_CHARS] + " [line cut]"


def _add(tally: Tally, hits: FileHits, args: GrepArgs) -> None:
    """Count one file's matches and print those that still fit under max_results."""
    if hits.binary:
        tally.binary += 1
    if not hits.hits:
        return
    tally.matches += len(hits.hits)
    tally.files += 1
    room = args.max_results - tally.shown
    if room > 0:
        shown = hits.hits[:room]
        tally.shown += len(shown)
        lines = _groups(hits, shown, args.context_lines)
        # ripgrep puts `--` between groups, so the very first group goes without.
        tally.output.extend(lines[1:] if not tally.output and lines[:1] == ["--"] else lines)


def _groups(hits: FileHits, shown: tuple[int, ...], context_lines: int) -> list[str]:
    """ripgrep's lines for the shown matches of one file, `--` opening each context group."""
    wanted = {
        index
        for hit in shown
        for index in range(max(hit - context_lines, 0), min(hit + context_lines + 1, hits.line_count))
    }
    lines: list[str] = []
    previous = -2
    matched = set(shown)
    for index in sorted(wanted):
        if context_lines and index > previous + 1:
            lines.append("--")
        mark = ":" if index in matched else "-"
        lines.append(f"{hits.path}{mark}{index + 1}{mark}{hits.text[index]}")
        previous = index
    return lines


def _render(tally: Tally, searched: int, oversize: int, limit: int) -> str:
    """The header, the shown lines and the notes on what was cut or skipped."""
    if tally.matches:
        header = (
            f"Found {_count(tally.matches, 'match', 'matches')} in {_count(tally.files, 'file', 'files')}"
        )
    else:
        header = f"No matches in {_count(searched - tally.binary, 'file', 'files')}"
    notes = []
    if tally.shown < tally.matches:
        notes.append(
            f"[found {tally.matches}, showing {tally.shown}: narrow the pattern, path or glob, "
            f"or raise max_results (at most {MAX_RESULTS})]"
        )
    skipped = []
    if tally.binary:
        skipped.append(_count(tally.binary, "binary file", "binary files"))
    if oversize:
        skipped.append(f"{_count(oversize, 'file', 'files')} over {limit} bytes")
    if skipped:
        notes.append(f"[Skipped {' and '.join(skipped)}]")
    return "\n".join([header, *tally.output, *notes])


def _count(number: int, one: str, many: str) -> str:
    """'1 file', '3 files'."""
    return f"{number} {one if number == 1 else many}"


SPEC = ToolSpec(
    name="grep",
    description=(
        "Searches the contents of the project's files for a regular expression and returns "
        "path:line:text for each matching line, sorted by path and line. Narrow it with path "
        "(a folder or file) and glob (e.g. '*.py'); case_sensitive is off by default; "
        "context_lines shows the lines around each match."
    ),
    category="search",
    args_model=GrepArgs,
    run=grep,
    example='grep(pattern="def main", path="src", glob="*.py")',
    aliases={
        "regex": "pattern",
        "query": "pattern",
        "search": "pattern",
        "file_path": "path",
        "directory": "path",
        "dir": "path",
        "include": "glob",
        "file_pattern": "glob",
    },
)
