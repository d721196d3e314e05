"""list_files: the files and folders under a path, one level or recursively."""

from pydantic import BaseModel, ConfigDict, Field

from tools.errors import ToolError
from tools.paths import normalize_path
from tools.registry import ToolContext, ToolSpec
from tools.storage import ObjectInfo


class ListFilesArgs(BaseModel):
    """Arguments of list_files."""

    model_config = ConfigDict(extra="forbid")

    path: str = Field("", description="Folder relative to the project root; '' or '.' is the root.")
    recursive: bool = Field(False, description="List every file below the folder, not one level.")


def list_files(args: ListFilesArgs, context: ToolContext) -> str:
    """Return the entries under a folder, sorted, within the entry limit."""
    folder = normalize_path(args.path)
    prefix = f"{folder}/" if folder else ""
    objects = list(context.store.list(context.project_id, prefix))
    if not objects:
        if folder and context.store.head(context.project_id, folder) is not None:
            raise ToolError(f"{folder} is a file, not a folder; use read_file to read it")
        raise ToolError(f"no such folder: {folder}" if folder else "the project has no files")
    entries = _entries(objects, prefix, args.recursive)
    limit = context.limits.list_files_max_entries
    lines = [f"Contents of {folder or '.'}/ ({len(entries)} entries):", *entries[:limit]]
    if len(entries) > limit:
        lines.append(f"...and {len(entries) - limit} more")
    return "\n".join(lines)


def _entries(objects: list[ObjectInfo], prefix: str, recursive: bool) -> list[str]:
    """One line per file (path and size), or per immediate child folder when not recursive."""
    files: list[str] = []
    folders: set[str] = set()
    for info in objects:
        rest = info.path[len(prefix) :]
        if not recursive and "/" in rest:
            folders.add(prefix + rest.split("/", 1)[0] + "/")
        else:
            files.append(f"{info.path}  ({info.size} bytes)")
    return sorted(folders) + files


SPEC = ToolSpec(
    name="list_files",
    description=(
        "Lists the files and folders under a folder of the project, with file sizes. Set "
        "recursive=true to list every file below it."
    ),
    category="search",
    args_model=ListFilesArgs,
    run=list_files,
    example='list_files(path="src", recursive=false)',
)
