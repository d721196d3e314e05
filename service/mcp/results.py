"""A tools/call as execute_action's request, and its answer (or why there is none) as an MCP result."""

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import mcp.types as types
from pydantic import ValidationError

from reactstep.contract.actions import ExecuteActionRequest, ExecuteActionResponse
from reactstep.service.errors import ServiceError

logger = logging.getLogger("reactstep")

# execute_action for MCP: the request, and the caller a write's token is bound to (None: the
# server's own approval tokens, the ones execute_action hands out)
ToolCall = Callable[[ExecuteActionRequest, str | None], Awaitable[ExecuteActionResponse]]
SESSION_ID = "mcp"  # execute_action's session_id; MCP has no session


@dataclass(frozen=True)
class Caller:
    """Whose call: the project it may use, and who the key is (tokens are bound to it)."""

    project_id: str
    caller: str


def request_for(
    project_id: str, name: str, arguments: dict[str, Any], token: Any = None
) -> ExecuteActionRequest:
    """execute_action's request for one call (pydantic's ValidationError for a bad one)."""
    return ExecuteActionRequest.model_validate(
        {
            "project_id": project_id,
            "session_id": SESSION_ID,
            "tool_name": name,
            "tool_args": arguments,
            "approval_token": token,
        }
    )


async def attempt(
    call: ToolCall,
    caller: Caller,
    name: str,
    arguments: dict[str, Any],
    token: Any = None,
    bound: bool = False,
) -> ExecuteActionResponse | types.CallToolResult:
    """The answer of one call; an error result when it cannot run. `bound`: the token is the caller's."""
    try:
        request = request_for(caller.project_id, name, arguments, token)
        return await call(request, caller.caller if bound else None)
    except ValidationError as exc:
        problems = "; ".join(error["msg"] for error in exc.errors(include_input=False, include_url=False))
        return error_result(f"Error: {name}: the call is not valid: {problems}")
    except ServiceError as exc:
        return error_result(f"Error: {exc.code}: {exc.message}")
    except Exception:
        logger.exception("unexpected error in the MCP tool call %s", name)
        return error_result("Error: internal error; see the server log")


def tool_result(observation: str, is_error: bool, **structured: Any) -> types.CallToolResult:
    """The observation as text and as structuredContent, with anything else the result carries."""
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=observation)],
        structured_content={"observation": observation, **structured},
        is_error=is_error,
    )


def error_result(text: str) -> types.CallToolResult:
    """A call that could not run."""
    return tool_result(text, is_error=True)
