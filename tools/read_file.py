"""read_file: a file's lines, numbered, cut at line and byte limits with a note on how to go on."""

from pydantic import BaseModel, ConfigDict, Field

from reactstep.tools.errors import ToolError
from reactstep.tools.registry import ToolContext, ToolSpec
from reactstep.tools.store.paths import normalize_path


class ReadFileArgs(BaseModel):
    """Arguments of read_file."""

    model_config = ConfigDict(extra="forbid")

    file_path: str = Field(description="Path relative to the project root, e.g. 'src/app.py'.")
    start_line: int | None = Field(None, ge=1, description="First line to read (1-based).")
    end_line: int | None = Field(None, ge=1, description="Last line to read (inclusive).")


def read_file(args: ReadFileArgs, context: ToolContext) -> str:
    """Return the requested lines of one file, numbered, within the limits."""
    path = normalize_path(args.file_path)
    if not path:
        raise ToolError("file_path is empty; use list_files to see the project root")
    data = context.store.get(context.project_id, path)
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
    body = "\n".join(f"{number:>5} | {text}" for number, text in shown)
    shown_last = shown[-1][0] if shown else first - 1
    if shown_last < last:
        note = (
            f"[Showing lines {first}-{shown_last} of {len(lines)}. To read on, call "
            f'read_file(file_path="{path}", start_line={shown_last + 1})]'
        )
        return f"{header}\n{body}\n{note}"
    return f"{header}\n{body}" if body else f"{header}\n(empty file)"


def _take_within_limits(
    lines: list[str], first: int, last: int, context: ToolContext
) -> list[tuple[int, str]]:
    """Lines first..last, stopping at the line or byte limit (always at least one line)."""
    taken: list[tuple[int, str]] = []
    budget = context.limits.read_file_max_bytes
    for number in range(first, last + 1):
        text = lines[number - 1]
        cost = len(text.encode("utf-8")) + 1
        if taken and (len(taken) >= context.limits.read_file_max_lines or cost > budget):
            break
        if not taken and cost > budget:
            text = text[: max(budget, 1)] + " [line cut]"
        taken.append((number, text))
        budget -= cost
    return taken


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
)
