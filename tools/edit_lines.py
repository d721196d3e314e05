"""edit_lines: insert, delete or replace a range of lines (1-based, inclusive), after approval.

seeds/002 Decision 4. Lines are numbered as read_file numbers them. insert puts `content` before
line start_line (start_line = line count + 1 appends); delete and replace act on start_line..end_line
(end_line defaults to start_line). `content` gets the file's line ending when it lacks one, unless it
ends the file and the file had no final newline.
"""

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from reactstep.tools.errors import ToolError
from reactstep.tools.registry import Observation, ToolContext, ToolSpec
from reactstep.tools.write_flow import Change, run_write
from reactstep.tools.writes.diffs import ends_a_line

Operation = Literal["insert", "delete", "replace"]


class EditLinesArgs(BaseModel):
    """Arguments of edit_lines."""

    model_config = ConfigDict(extra="forbid")

    path: str = Field(description="Path of an existing file, relative to the project root.")
    operation: Operation = Field(
        description="insert: put content before start_line; delete: remove the lines; "
        "replace: put content in place of the lines."
    )
    start_line: int = Field(ge=1, description="First line (1-based), as read_file numbers them.")
    end_line: int | None = Field(
        None, ge=1, description="Last line, inclusive, for delete and replace; start_line when left out."
    )
    content: str = Field("", description="The new lines for insert and replace.")


def edit_lines(args: EditLinesArgs, context: ToolContext) -> Observation:
    """Preview the line edit, or write it when the call carries the user's approval."""

    def plan(path: str, current: str | None) -> Change:
        if current is None:
            raise ToolError(f"file not found: {path}; use create_file to make a new file")
        lines = current.splitlines(keepends=True)
        first, last = _line_range(args, path, len(lines))
        new = [] if args.operation == "delete" else _content_lines(args.content, lines, last)
        if args.operation == "insert" and lines and first > len(lines) and not ends_a_line(lines[-1]):
            lines[-1] += _line_ending(lines)  # appending after a last line without a newline
        return Change("".join(lines[: first - 1] + new + lines[last:]), _summary(args, first, last))

    return run_write(SPEC.name, args, args.path, plan, context)


def _line_range(args: EditLinesArgs, path: str, count: int) -> tuple[int, int]:
    """(first, last) of the lines the edit replaces; for insert, last = first - 1 (none)."""
    first = args.start_line
    if args.operation == "insert":
        if first > count + 1:
            raise ToolError(
                f"start_line {first} is out of range: {path} has {count} lines; insert accepts "
                f"1 to {count + 1} ({count + 1} appends at the end)"
            )
        return first, first - 1
    last = args.end_line if args.end_line is not None else first
    if last < first:
        raise ToolError(f"end_line ({last}) is before start_line ({first})")
    if last > count:
        raise ToolError(
            f"line range {first}-{last} is out of range: {path} has {count} lines; read_file shows them"
        )
    return first, last


def _content_lines(content: str, lines: list[str], last: int) -> list[str]:
    """The new lines, each ended like the file's lines (the file's last line may stay unended)."""
    new = content.splitlines(keepends=True)
    at_end = last >= len(lines)
    file_unended = bool(lines) and not ends_a_line(lines[-1])
    if new and not ends_a_line(new[-1]) and not (at_end and file_unended):
        new[-1] += _line_ending(lines)
    return new


def _line_ending(lines: list[str]) -> str:
    """The file's line ending: CRLF when its first line uses it, else LF."""
    return "\r\n" if lines and lines[0].endswith("\r\n") else "\n"


def _summary(args: EditLinesArgs, first: int, last: int) -> str:
    if args.operation == "insert":
        return f"insert before line {first}"
    return f"{args.operation} lines {first}-{last}" if last > first else f"{args.operation} line {first}"


SPEC = ToolSpec(
    name="edit_lines",
    description=(
        "Inserts, deletes or replaces lines of a file by number (1-based, end_line inclusive), as "
        "read_file shows them: insert puts content before start_line; delete and replace act on "
        "start_line..end_line. The user sees the diff and must approve it before anything is written."
    ),
    category="writing",
    args_model=EditLinesArgs,
    run=edit_lines,
    example='edit_lines(path="src/app.py", operation="replace", start_line=2, content="    return 43")',
    aliases={"file_path": "path", "filepath": "path", "file": "path"},
    read_only=False,
    requires_approval=True,
)
