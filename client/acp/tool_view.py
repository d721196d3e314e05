"""How a tool call looks in the editor: its ACP kind, title, locations (path and line) and content.

The path a tool names is relative to the project, which is the session's folder (cwd), so a location
is cwd/path; an observation is shown as text, and a write's preview as ACP diff content (old and new
text, diff_text.py) beside the unified diff.
"""

from pathlib import Path
from typing import Any

from acp import text_block, tool_content, tool_diff_content
from acp.schema import ToolCallLocation, ToolKind

from reactstep.client.acp.diff_text import DiffMismatch, apply_unified_diff

KINDS: dict[str, ToolKind] = {
    "read_file": "read",
    "list_files": "read",
    "project_overview": "read",
    "grep": "search",
    "code_search": "search",
    "find_files": "search",
    "find_definition": "search",
    "find_importers": "search",
    "create_file": "edit",
    "edit_file": "edit",
    "replace_in_file": "edit",
    "edit_lines": "edit",
    "bash": "execute",
    "bash_output": "execute",
    "kill_bash": "execute",
}
PATH_ARGS = ("file_path", "path")
LINE_ARGS = ("start_line", "line")
SUBJECT_ARGS = ("file_path", "path", "pattern", "query", "name", "command", "bash_id")


def kind_of(tool_name: str) -> ToolKind:
    """The ACP kind the editor groups and draws the call by (`other` for a tool it cannot name)."""
    return KINDS.get(tool_name, "other")


def title_of(tool_name: str, tool_args: dict[str, Any]) -> str:
    """`read_file src/app.py`, `grep def main`: the tool and what it works on."""
    subject = next((tool_args[key] for key in SUBJECT_ARGS if isinstance(tool_args.get(key), str)), "")
    return f"{tool_name} {subject[:120]}".strip()


def path_of(tool_args: dict[str, Any]) -> str | None:
    """The project path the call names, if any."""
    return next((tool_args[key] for key in PATH_ARGS if isinstance(tool_args.get(key), str)), None)


def locations_of(root: Path, tool_args: dict[str, Any]) -> list[ToolCallLocation]:
    """Where the call reads or writes, as the editor opens it: the absolute path and the first line."""
    path = path_of(tool_args)
    if path is None:
        return []
    line = next((tool_args[key] for key in LINE_ARGS if isinstance(tool_args.get(key), int)), None)
    return [ToolCallLocation(path=str(root / path), line=line)]


def text_content(text: str) -> list[Any]:
    """An observation as the call's content."""
    return [tool_content(text_block(text))]


def diff_content(root: Path, path: str, before: str | None, diff: str) -> list[Any]:
    """A write's preview: ACP diff content (the file's text before and after) when the diff applies to
    `before`, and the unified diff as text either way."""
    shown = text_content(diff)
    try:
        after = apply_unified_diff(before or "", diff)
    except DiffMismatch:
        return shown
    return [tool_diff_content(str(root / path), after, before), *shown]
