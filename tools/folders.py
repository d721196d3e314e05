"""The files a search tool looks at: everything below a folder, or the one file a path names."""

from reactstep.tools.errors import ToolError
from reactstep.tools.registry import ToolContext
from reactstep.tools.store.objects import ObjectInfo
from reactstep.tools.store.paths import ProjectPath, normalize_path


def files_in_folder(context: ToolContext, path: str) -> tuple[str, list[ObjectInfo]]:
    """The normalized folder and every file below it, sorted; ToolError if there are none."""
    folder = normalize_path(path)
    found = _files_below(context, folder)
    if not found:
        if folder and context.store.head(context.project_id, folder) is not None:
            raise ToolError(f"{folder} is a file, not a folder; use read_file to read it")
        raise ToolError(f"no such folder: {folder}" if folder else "the project has no files")
    return folder, found


def files_at(context: ToolContext, path: str) -> tuple[str, list[ObjectInfo]]:
    """Like files_in_folder, except that a path naming a file gives just that file."""
    folder = normalize_path(path)
    found = _files_below(context, folder)
    if not found and folder and (single := context.store.head(context.project_id, folder)) is not None:
        found = [single]
    if not found:
        raise ToolError(f"no such file or folder: {folder}" if folder else "the project has no files")
    return folder, found


def _files_below(context: ToolContext, folder: ProjectPath) -> list[ObjectInfo]:
    """Every file below `folder` ('' is the project root), sorted by path."""
    return list(context.store.list(context.project_id, folder))
