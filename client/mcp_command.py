"""`reactstep mcp --project P`: the MCP tools over stdio, for an IDE agent on this machine.

    without --server    the tools run in this process on the local data dir (REACTSTEP_DATA_DIR),
                        by the same execute_action core as the service; when a `reactstep serve` runs
                        on that data dir, this bridges to it instead (its embedded store is its own)
    --server URL        a bridge: the tools the server lists (GET /api/agent/tools), each call sent to
                        its POST /api/agent/execute_action with REACTSTEP_CLIENT_API_KEY; a write's
                        preview and its approval_token pass through unchanged
stdout carries the protocol alone: anything else printed goes to stderr.
"""

import argparse
import os
import sys
from typing import IO, TYPE_CHECKING, Any

import httpx

from reactstep.client.loop import ClientError, api_error
from reactstep.client.servers import client_key, named_or_running
from reactstep.contract.actions import ExecuteActionRequest, ExecuteActionResponse
from reactstep.service.settings import Settings

if TYPE_CHECKING:
    from reactstep.service.mcp.server import ToolCall


def add_mcp_command(commands: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """The `mcp` subcommand."""
    command = commands.add_parser("mcp", help="serve the project's tools to an IDE agent over MCP (stdio)")
    command.add_argument("--project", required=True, help="project id (the agent cannot change it)")
    command.add_argument(
        "--server",
        help="a running service to bridge to (default: the one running on this data dir, else the tools "
        "run here, on the local store)",
    )
    command.set_defaults(run=run_mcp)


def run_mcp(args: argparse.Namespace) -> int:
    """Serve until the IDE closes stdin; exit 1 before serving when the project cannot be used."""
    from reactstep.service.mcp.server import build_server, run_stdio  # the SDK loads for this command only

    settings = Settings()
    if server := named_or_running(args.server, settings):  # a `reactstep serve` on this data dir too
        tools, call = _remote_tools(server.rstrip("/"), args.project, client_key())
        run_stdio(build_server(tools, call, args.project), _protocol_output())
        return 0
    from reactstep.service.mcp.local import local_caller, local_tools
    from reactstep.service.runtime import build_runtime
    from reactstep.service.workspace.projects import require_project

    runtime = build_runtime(settings)
    try:
        require_project(args.project, runtime)
        run_stdio(build_server(local_tools(runtime), local_caller(runtime), args.project), _protocol_output())
    finally:
        runtime.vectors.close()
    return 0


def _protocol_output() -> IO[bytes]:
    """This process's stdout for the protocol; file descriptor 1 then points at stderr."""
    sys.stdout.flush()
    output = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    return output


def _remote_tools(
    server_url: str, project_id: str, key: str | None
) -> tuple[list[dict[str, Any]], "ToolCall"]:
    """The server's manifest and a call that runs each tool there; ClientError if key or project fail."""
    headers = {"authorization": f"Bearer {key}"} if key else {}
    try:
        project = httpx.get(f"{server_url}/api/projects/{project_id}", headers=headers, timeout=30)
        if project.status_code != 200:
            raise api_error(project.status_code, project.json())
        manifest = httpx.get(f"{server_url}/api/agent/tools", headers=headers, timeout=30).json()
    except (httpx.HTTPError, ValueError) as exc:
        raise ClientError(f"cannot use {server_url}: {exc}") from exc

    async def call(request: ExecuteActionRequest) -> ExecuteActionResponse:
        body = request.model_dump(mode="json", exclude_none=True)
        try:
            async with httpx.AsyncClient(headers=headers, timeout=300) as http:
                response = await http.post(f"{server_url}/api/agent/execute_action", json=body)
            if response.status_code == 200:
                return ExecuteActionResponse.model_validate(response.json())
            problem = str(api_error(response.status_code, response.json()))
        except (httpx.HTTPError, ValueError) as exc:
            problem = f"cannot reach {server_url}: {exc}"
        return ExecuteActionResponse(
            session_id=request.session_id,
            tool_name=request.tool_name,
            observation=f"Error: {problem}",
            is_error=True,
            execution_time_ms=0.0,
        )

    tools: list[dict[str, Any]] = manifest["tools"]
    return tools, call
