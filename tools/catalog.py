"""Which server tools reactstep ships, in manifest order."""

from tools import code_search, find_files, grep, list_files, read_file
from tools.registry import ToolRegistry


def default_registry() -> ToolRegistry:
    """Every server tool, in the order the manifest lists them."""
    return ToolRegistry([code_search.SPEC, grep.SPEC, find_files.SPEC, list_files.SPEC, read_file.SPEC])
