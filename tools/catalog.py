"""Which server tools reactstep ships, in manifest order."""

from tools import list_files, read_file
from tools.registry import ToolRegistry


def default_registry() -> ToolRegistry:
    """Every server tool, in the order the manifest lists them."""
    return ToolRegistry([list_files.SPEC, read_file.SPEC])
