"""list_files: the files and folders under a path, to a depth, a page of entries at a time.

Entries: folders cut off by the depth first (with a trailing '/'), then files with sizes,
each group sorted. At most `list_files_max_entries` entries are shown over all pages
(the rest are counted as "...and N more"), `list_files_page_size` per page; a page
that is not the last ends with the exact call for the next one.
"""

import json

from pydantic import BaseModel, ConfigDict, Field

from reactstep.tools.errors import ToolError
from reactstep.tools.folders import files_in_folder
from reactstep.tools.registry import ToolContext, ToolSpec
from reactstep.tools.store.objects import ObjectInfo


class ListFilesArgs(BaseModel):
    """Arguments of list_files."""

    model_config = ConfigDict(extra="forbid")

    path: str = Field("", description="Folder relative to the project root; '' or '.' is the root.")
    recursive: bool = Field(False, description="List every file below the folder, not one level.")
    depth: int | None = Field(
        None,
        ge=1,
        le=100,
        description="Folder levels to list: 1 is the folder's own entries (the default), 2 adds "
        "their children, and so on. Overrides recursive.",
    )
    page: int = Field(1, ge=1, description="Which page of a long listing to show (1 is the first).")


def list_files(args: ListFilesArgs, context: ToolContext) -> str:
    """Return one page of the entries under a folder, sorted."""
    folder, objects = files_in_folder(context, args.path)
    entries = _entries(objects, f"{folder}/" if folder else "", _depth(args))
    shown = entries[: context.limits.list_files_max_entries]
    size = max(context.limits.list_files_page_size, 1)
    pages = max((len(shown) + size - 1) // size, 1)
    if args.page > pages:
        raise ToolError(f"page {args.page} is past the end: {folder or '.'}/ has {pages} page(s) of entries")
    first = (args.page - 1) * size
    page = shown[first : first + size]
    count = f"{len(entries)} entries" + (f"; page {args.page} of {pages}" if pages > 1 else "")
    lines = [f"Contents of {folder or '.'}/ ({count}):", *page]
    if args.page < pages:
        lines.append(
            f"[Showing entries {first + 1}-{first + len(page)} of {len(entries)}. For the next page, "
            f"call {_next_call(folder, args)}]"
        )
    elif len(entries) > len(shown):
        lines.append(f"...and {len(entries) - len(shown)} more")
    return "\n".join(lines)


def _depth(args: ListFilesArgs) -> int | None:
    """How many levels to list; None is every level."""
    if args.depth is not None:
        return args.depth
    return None if args.recursive else 1


def _entries(objects: list[ObjectInfo], prefix: str, depth: int | None) -> list[str]:
    """One line per file within the depth (path and size), one per folder the depth cuts off."""
    files: list[str] = []
    folders: set[str] = set()
    for info in objects:
        parts = info.path[len(prefix) :].split("/")
        if depth is not None and len(parts) > depth:
            folders.add(prefix + "/".join(parts[:depth]) + "/")
        else:
            files.append(f"{info.path}  ({info.size} bytes)")
    return sorted(folders) + files


def _next_call(folder: str, args: ListFilesArgs) -> str:
    """The list_files call that shows the page after `args.page`."""
    parts = [f"path={json.dumps(folder or '.')}"]
    if args.recursive:
        parts.append("recursive=true")
    if args.depth is not None:
        parts.append(f"depth={args.depth}")
    parts.append(f"page={args.page + 1}")
    return f"list_files({', '.join(parts)})"


SPEC = ToolSpec(
    name="list_files",
    description=(
        "Lists the files and folders under a folder of the project, with file sizes. Set "
        "recursive=true to list every file below it, or depth=2 (3, ...) to go that many levels "
        "down. Long listings come in pages; the last line says how to get the next one."
    ),
    category="search",
    args_model=ListFilesArgs,
    run=list_files,
    example='list_files(path="src", recursive=false)',
    aliases={
        "dir": "path",
        "directory": "path",
        "folder": "path",
        "dir_path": "path",
        "directory_path": "path",
        "folder_path": "path",
    },
)
