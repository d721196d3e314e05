"""The tools of this process's registry for the MCP server, run by execute_action's own core."""

from typing import Any

from reactstep.contract.actions import ExecuteActionRequest, ExecuteActionResponse
from reactstep.service.mcp.server import ToolCall
from reactstep.service.runtime import Runtime
from reactstep.service.step.prompt import describe_tools
from reactstep.service.workspace.calls import execute_action


def local_tools(runtime: Runtime) -> list[dict[str, Any]]:
    """The manifest entries GET /api/agent/tools lists."""
    tools: list[dict[str, Any]] = describe_tools(runtime.registry)["tools"]
    return tools


def local_caller(runtime: Runtime) -> ToolCall:
    """execute_action for the MCP server: the same core, the same thread rule as the REST endpoint."""

    async def call(request: ExecuteActionRequest) -> ExecuteActionResponse:
        return await execute_action(request, runtime)

    return call
