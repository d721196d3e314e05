"""GET /api/agent/tools: the server's tools, as the prompt shows them and one by one."""

from typing import Any, Literal

from pydantic import ConfigDict

from reactstep.contract.common import WireModel

Category = Literal["search", "reading", "writing", "execution"]


class ToolDescription(WireModel):
    """One server tool."""

    model_config = ConfigDict(extra="forbid")

    name: str
    description: str
    category: Category
    read_only: bool
    """The tool never changes the project."""
    requires_approval: bool
    """The client should ask the user before running it."""
    parameters: dict[str, Any]
    """The JSON Schema of the tool's arguments."""


class ToolManifest(WireModel):
    """GET /api/agent/tools."""

    model_config = ConfigDict(extra="forbid")

    prompt_segment: str
    """The manifest text the server puts in the system prompt."""
    tools: list[ToolDescription]
