"""Which server tools reactstep ships, in manifest order."""

from reactstep.tools import (
    code_search,
    create_file,
    edit_file,
    edit_lines,
    find_definition,
    find_files,
    find_importers,
    grep,
    list_files,
    project_overview,
    read_file,
    replace_in_file,
)
from reactstep.tools.registry import ToolRegistry


def default_registry() -> ToolRegistry:
    """Every server tool, in the order the manifest lists them."""
    return ToolRegistry(
        [
            code_search.SPEC,
            grep.SPEC,
            find_files.SPEC,
            find_definition.SPEC,
            find_importers.SPEC,
            project_overview.SPEC,
            list_files.SPEC,
            read_file.SPEC,
            create_file.SPEC,
            edit_file.SPEC,
            replace_in_file.SPEC,
            edit_lines.SPEC,
        ]
    )
