"""read_file: a file's lines, numbered, cut at line and byte limits with a note on how to go on."""

import threading

from pydantic import BaseModel, ConfigDict, Field

from reactstep.tools.errors import ToolError
from reactstep.tools.recent import Recent
from reactstep.tools.registry import ToolContext, ToolLimits, ToolSpec
from reactstep.tools.store.paths import normalize_path

NUMBERED = "%5d | "  # before each line shown: its number, right-aligned in five columns
PREFIXES_KEPT = 20_000  # the prefixes of the first lines are made once and kept
_PREFIXES: list[str] = []
_GROWING = threading.Lock()
RENDERED_KEPT = 64
RENDERED_MAX_BYTES = 128 * 1024
_rendered: Recent[tuple[str, bytes, int | None, int | None, ToolLimits], str] = Recent(RENDERED_KEPT)


class ReadFileArgs(BaseModel):
    """Arguments of read_file."""

    model_config = ConfigDict(extra="forbid")

    file_path: str = Field(description="Path relative to the project root, e.g. 'src/app.py'.")
    start_line: int | None = Field(None, ge=1, description="First line to read (1-based).")
    end_line: int | None = Field(None, ge=1, description="Last line to read (inclusive).")


def read_file(args: ReadFileArgs, context: ToolContext) -> str:
    """Return the requested lines of one file, numbered, within the limits.

    The same bytes asked for the same way read the same: the last RENDERED_KEPT answers for files
    of up to RENDERED_MAX_BYTES are kept by path, bytes, lines asked for and limits.
    """
    path = normalize_path(args.file_path)
    if not path:
        raise ToolError("file_path is empty; use list_files to see the project root")
    data = context.store.get(context.project_id, path)
    if len(data) > RENDERED_MAX_BYTES:
        return _render(path, data, args, context)
    key = (path, data, args.start_line, args.end_line, context.limits)
    return _rendered.get_or_make(key, lambda: _render(path, data, args, context))


def _render(path: str, data: bytes, args: ReadFileArgs, context: ToolContext) -> str:
    if b"\x00" in data[:8192]:
        raise ToolError(f"{path} is a binary file ({len(data)} bytes) and cannot be shown")
    lines = data.decode("utf-8", errors="replace").splitlines()
    first = args.start_line or 1
    last = min(args.end_line or len(lines), len(lines))
    if args.end_line is not None and args.end_line < first:
        raise ToolError(f"end_line ({args.end_line}) is before start_line ({first})")
    if lines and first > len(lines):
        raise ToolError(f"start_line {first} is past the end of {path} ({len(lines)} lines)")
    shown = _take_within_limits(lines, first, last, context)
    header = f"File: {path} ({len(lines)} lines)"
    body = _numbered(first, shown)
    shown_last = first + len(shown) - 1
    if shown_last < last:
        note = (
            f"[Showing lines {first}-{shown_last} of {len(lines)}. To read on, call "
            f'read_file(file_path="{path}", start_line={shown_last + 1})]'
        )
        return f"{header}\n{body}\n{note}"
    return f"{header}\n{body}" if body else f"{header}\n(empty file)"


def _take_within_limits(lines: list[str], first: int, last: int, context: ToolContext) -> list[str]:
    """Lines first..last, stopping at the line or byte limit (always at least one line)."""
    wanted = lines[first - 1 : last]
    budget = context.limits.read_file_max_bytes
    if len(wanted) <= context.limits.read_file_max_lines and len("\n".join(wanted).encode()) < budget:
        return wanted  # all of them fit: no need to count line by line
    taken: list[str] = []
    for text in wanted:
        cost = len(text.encode("utf-8")) + 1
        if taken and (len(taken) >= context.limits.read_file_max_lines or cost > budget):
            break
        if not taken and cost > budget:
            text = text[: max(budget, 1)] + " [line cut]"
        taken.append(text)
        budget -= cost
    return taken


def _numbered(first: int, texts: list[str]) -> str:
    """The lines, each after its number right-aligned in five columns and ' | '."""
    end = first + len(texts)
    if end - 1 > len(_PREFIXES) and end - 1 <= PREFIXES_KEPT:
        with _GROWING:  # one thread at a time, or two could append the same numbers
            _PREFIXES.extend(NUMBERED % number for number in range(len(_PREFIXES) + 1, end))
    if end - 1 <= len(_PREFIXES):
        prefixes = _PREFIXES[first - 1 : end - 1]
    else:
        prefixes = [NUMBERED % number for number in range(first, end)]
    return "\n".join([prefix + text for prefix, text in zip(prefixes, texts, strict=True)])


SPEC = ToolSpec(
    name="read_file",
    description=(
        "Reads a file of the project and returns its lines, numbered. Use start_line and "
        "end_line to read part of a long file."
    ),
    category="reading",
    args_model=ReadFileArgs,
    run=read_file,
    example='read_file(file_path="src/models/user.py")',
    aliases={
        "path": "file_path",
        "filepath": "file_path",
        "file": "file_path",
        "filename": "file_path",
        "file_name": "file_path",
        "start": "start_line",
        "line_start": "start_line",
        "end": "end_line",
        "line_end": "end_line",
    },
    file_arg="file_path",
)
