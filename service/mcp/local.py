"""The tools of this process's registry for the MCP server, run by execute_action's own core."""

from typing import Any

from reactstep.contract.actions import ExecuteActionRequest, ExecuteActionResponse
from reactstep.service.mcp.results import ToolCall
from reactstep.service.runtime import Runtime
from reactstep.service.step.prompt import describe_tools
from reactstep.service.workspace.calls import execute_action

BOUND_TOKEN_NAME = "requestState"  # what a refusal calls a token bound to its caller


def local_tools(runtime: Runtime) -> list[dict[str, Any]]:
    """The manifest entries GET /api/agent/tools lists."""
    tools: list[dict[str, Any]] = describe_tools(runtime.registry)["tools"]
    return tools


def local_caller(runtime: Runtime) -> ToolCall:
    """execute_action for the MCP server: the same core, the same thread rule as the REST endpoint;
    a write's token bound to the caller when one is named."""

    async def call(request: ExecuteActionRequest, caller: str | None) -> ExecuteActionResponse:
        if caller is None:
            return await execute_action(request, runtime)
        return await execute_action(request, runtime, runtime.approvals.bound_to(caller, BOUND_TOKEN_NAME))

    return call
