"""The tool manifest over HTTP: the prompt segment and each tool's JSON Schema."""

from typing import Any

from reactstep.service.step.prompting import render_manifest, tool_prompts
from reactstep.tools.registry import ToolRegistry


def describe_tools(registry: ToolRegistry) -> dict[str, Any]:
    """What GET /api/agent/tools returns."""
    return {
        "prompt_segment": render_manifest(tool_prompts(registry, [])),
        "tools": [
            {
                "name": spec.name,
                "description": spec.description,
                "category": spec.category,
                "read_only": spec.read_only,
                "requires_approval": spec.requires_approval,
                "parameters": spec.json_schema(),
            }
            for spec in registry.specs
        ],
    }
