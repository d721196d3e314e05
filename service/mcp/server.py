"""The MCP server over the tool manifest; the one module of the server side that imports the `mcp` SDK.

    tools/list      the REST manifest's entries: name, description, parameters as inputSchema, annotations
                    from the flags; a write tool takes one more argument, approval_token
    tools/call      ExecuteActionRequest(project, name, arguments, approval_token) -> ToolCall -> the
                    execute_action answer as a result: its observation as text, is_error as isError; a
                    preview adds the token as text and {"approval": ...} as structuredContent
    resources       reactstep://projects/<id>/overview: what the project_overview tool answers
    prompts         react(question): react_step's system prompt (native tool calling) and the question
The project is the URL's (streamable HTTP) or the command line's (stdio), never an argument. Whatever
goes wrong in a call is a result with isError, never a protocol error.
"""

import logging
from collections.abc import Awaitable, Callable
from io import TextIOWrapper
from typing import IO, Any

import anyio
import mcp.types as types
from mcp.server.lowlevel import Server
from mcp.server.lowlevel.helper_types import ReadResourceContents
from mcp.server.stdio import stdio_server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from pydantic import AnyUrl, ValidationError
from starlette.types import Receive, Scope, Send

from reactstep.contract.actions import ExecuteActionRequest, ExecuteActionResponse
from reactstep.service.errors import ServiceError
from reactstep.service.mcp.prompt import react_prompt
from reactstep.service.version import package_version

logger = logging.getLogger("reactstep")

ToolCall = Callable[[ExecuteActionRequest], Awaitable[ExecuteActionResponse]]
SESSION_ID = "mcp"  # execute_action's session_id; MCP over stateless HTTP has no session
APPROVAL_ARGUMENT = "approval_token"
APPROVAL_SCHEMA = {
    "type": "string",
    "description": "Leave out to preview the change (nothing is written); to apply it once the user "
    "approved the diff, repeat the same call with the token the preview returned.",
}
INSTRUCTIONS = (
    "Tools over one indexed project. Write tools never write on their first call: it returns the diff "
    "and an approval_token; show the diff, and only once the user agrees repeat the same call with "
    "approval_token to write it."
)

REACT_PROMPT = types.Prompt(
    name="react",
    title="Answer as reactstep's agent",
    description="reactstep's ReAct system prompt, then your question about the project.",
    arguments=[
        types.PromptArgument(name="question", description="What to find out or change.", required=True)
    ],
)


def build_server(
    tools: list[dict[str, Any]], call: ToolCall, project_id: str | None = None
) -> Server[Any, Any]:
    """An MCP server for the manifest `tools`; project_id None: the project is the HTTP request URL's."""
    server: Server[Any, Any] = Server("reactstep", version=package_version(), instructions=INSTRUCTIONS)
    listed = [mcp_tool(entry) for entry in tools]
    approving = {entry["name"] for entry in tools if entry["requires_approval"]}

    def project() -> str:
        if project_id is not None:
            return project_id
        request = server.request_context.request
        assert request is not None  # the HTTP transport hands every request its HTTP request
        url_project: str = request.path_params["project_id"]
        return url_project

    async def list_tools() -> list[types.Tool]:
        return listed

    async def call_tool(name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        return await run_tool(call, project(), name, dict(arguments), name in approving)

    async def list_resources() -> list[types.Resource]:
        return [overview_resource(project())]

    async def read_resource(uri: AnyUrl) -> list[ReadResourceContents]:
        if str(uri) != overview_uri(project()):
            raise ValueError(f"unknown resource {uri}; this server has {overview_uri(project())}")
        answer = await call(_request(project(), "project_overview", {}, None))
        return [ReadResourceContents(answer.observation, "text/markdown")]

    # The registry validates arguments itself, with the same messages as execute_action. The SDK's
    # decorator factories without arguments carry no annotations.
    server.list_tools()(list_tools)  # type: ignore[no-untyped-call]
    server.call_tool(validate_input=False)(call_tool)
    server.list_resources()(list_resources)  # type: ignore[no-untyped-call]
    server.read_resource()(read_resource)  # type: ignore[no-untyped-call]
    server.list_prompts()(list_prompts)  # type: ignore[no-untyped-call]
    server.get_prompt()(get_prompt)  # type: ignore[no-untyped-call]
    return server


async def list_prompts() -> list[types.Prompt]:
    """prompts/list: the one prompt."""
    return [REACT_PROMPT]


async def get_prompt(name: str, arguments: dict[str, str] | None) -> types.GetPromptResult:
    """prompts/get: the ReAct system prompt and the question, as one user message."""
    question = (arguments or {}).get("question", "")
    if name != REACT_PROMPT.name or not question.strip():
        raise ValueError("the one prompt is 'react', with a non-empty argument 'question'")
    text = types.TextContent(type="text", text=react_prompt(question))
    message = types.PromptMessage(role="user", content=text)
    return types.GetPromptResult(description=REACT_PROMPT.description, messages=[message])


def mcp_tool(entry: dict[str, Any]) -> types.Tool:
    """One manifest entry as an MCP tool."""
    schema = entry["parameters"]
    if entry["requires_approval"]:
        schema = {
            **schema,
            "properties": {**schema.get("properties", {}), APPROVAL_ARGUMENT: APPROVAL_SCHEMA},
        }
    read_only = bool(entry["read_only"])
    return types.Tool(
        name=entry["name"],
        description=entry["description"],
        inputSchema=schema,
        annotations=types.ToolAnnotations(
            readOnlyHint=read_only,
            destructiveHint=not read_only,
            # a write repeated with its token writes nothing more ("Already applied")
            idempotentHint=read_only or bool(entry["requires_approval"]),
            openWorldHint=False,
        ),
    )


async def run_tool(
    call: ToolCall, project_id: str, name: str, arguments: dict[str, Any], approving: bool
) -> types.CallToolResult:
    """One tools/call: the execute_action answer, or the reason it could not run, as a result."""
    token = arguments.pop(APPROVAL_ARGUMENT, None) if approving else None
    try:
        answer = await call(_request(project_id, name, arguments, token))
    except ValidationError as exc:
        problems = "; ".join(error["msg"] for error in exc.errors(include_input=False, include_url=False))
        return _error(f"Error: {name}: the call is not valid: {problems}")
    except ServiceError as exc:
        return _error(f"Error: {exc.code}: {exc.message}")
    except Exception:
        logger.exception("unexpected error in the MCP tool call %s", name)
        return _error("Error: internal error; see the server log")
    content = [types.TextContent(type="text", text=answer.observation)]
    if answer.approval is None:
        return types.CallToolResult(content=content, isError=answer.is_error)
    approval = answer.approval.model_dump(mode="json")
    content.append(types.TextContent(type="text", text=approval_note(name, answer.approval.token)))
    return types.CallToolResult(content=content, structuredContent={"approval": approval}, isError=False)


def approval_note(name: str, token: str) -> str:
    """What the model reads after a preview: how to apply the change once the user said yes."""
    return (
        f"To apply this change after the user approved the diff, call {name} again with the same "
        f'arguments and approval_token="{token}".'
    )


def overview_uri(project_id: str) -> str:
    """The project overview's resource URI."""
    return f"reactstep://projects/{project_id}/overview"


def overview_resource(project_id: str) -> types.Resource:
    """The project overview as a listed resource."""
    return types.Resource(
        uri=AnyUrl(overview_uri(project_id)),
        name="project_overview",
        title=f"Overview of {project_id}",
        description="Languages, layout, entry points, most imported modules, tests and conventions.",
        mimeType="text/markdown",
    )


class HttpTransport:
    """Streamable HTTP without sessions: every request stands alone, so any replica answers it.

    Each request gets a session manager and task group of its own that end with it: nothing outlives
    a request, so the app needs no MCP lifespan (and stays usable by servers and test clients that
    run the lifespan more than once, or never).
    """

    def __init__(self, server: Server[Any, Any], json_response: bool) -> None:
        self._server = server
        self._json_response = json_response

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Answer one MCP request whose caller and project were checked already."""
        sessions = StreamableHTTPSessionManager(
            app=self._server, stateless=True, json_response=self._json_response
        )
        async with sessions.run():
            await sessions.handle_request(scope, receive, send)


async def serve_stdio(server: Server[Any, Any], output: IO[bytes]) -> None:
    """Serve MCP over stdin and `output` (this process's stdout, kept for the protocol alone)."""
    stdout = anyio.wrap_file(TextIOWrapper(output, encoding="utf-8"))
    async with stdio_server(stdout=stdout) as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def run_stdio(server: Server[Any, Any], output: IO[bytes]) -> None:
    """serve_stdio on a new event loop, until the client closes stdin."""
    anyio.run(serve_stdio, server, output)


def _request(project_id: str, name: str, arguments: dict[str, Any], token: Any) -> ExecuteActionRequest:
    return ExecuteActionRequest.model_validate(
        {
            "project_id": project_id,
            "session_id": SESSION_ID,
            "tool_name": name,
            "tool_args": arguments,
            "approval_token": token,
        }
    )


def _error(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], isError=True)
