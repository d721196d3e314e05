"""The MCP server over the tool manifest, on the official SDK (2.x): every revision from 2025-06-18 to
the stateless 2026-07-28, one set of handlers.

    tools/list      the REST manifest's entries in its fixed order: name, description, parameters as
                    inputSchema, annotations from the flags, an outputSchema; a write tool takes one more
                    argument, approval_token, only where the client cannot ask the person (asking.py)
    tools/call      ExecuteActionRequest(project, name, arguments) -> ToolCall -> the execute_action
                    answer as a result: its observation as text and as structuredContent, is_error as
                    isError; a write asks the person first (asking.py)
    resources       reactstep://projects/<id>/overview: what the project_overview tool answers
    prompts         react(question): react_step's system prompt (native tool calling) and the question
    server/discover the SDK's, from these handlers; list results carry cache hints (CACHE_HINTS)
The project is the URL's (streamable HTTP) or the command line's (stdio), never an argument. Whatever
goes wrong in a call is a result with isError, never a protocol error.
"""

from typing import Any

import mcp.types as types
from mcp.server import Server, ServerRequestContext
from mcp.server.caching import CacheHint

from reactstep.service.mcp.asking import (
    APPROVAL_ARGUMENT,
    APPROVAL_SCHEMA,
    approve_by_token,
    can_ask,
    run_asking,
)
from reactstep.service.mcp.prompt import react_prompt
from reactstep.service.mcp.results import Caller, ToolCall, attempt, request_for, tool_result
from reactstep.service.version import package_version

LOCAL_CALLER = "local"  # stdio on this machine: whoever runs the command is the caller
INSTRUCTIONS = (
    "Tools over one indexed project. Write tools never write without the user's approval of the diff: "
    "where the client can ask the user (MCP 2026-07-28 input requests, or elicitation) the call asks "
    "and then writes or not; elsewhere the first call returns the diff and an approval_token, and only "
    "once the user agrees repeat the same call with approval_token to write it."
)
# The lists change only with the server's version; the project's own text is not in them.
CACHE_HINTS: dict[Any, CacheHint] = {
    "tools/list": CacheHint(ttl_ms=300_000, scope="private"),
    "prompts/list": CacheHint(ttl_ms=300_000, scope="private"),
    "resources/list": CacheHint(ttl_ms=300_000, scope="private"),
}
OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"observation": {"type": "string", "description": "What the tool answered."}},
    "required": ["observation"],
}
WRITE_OUTPUT_SCHEMA: dict[str, Any] = {
    **OUTPUT_SCHEMA,
    "properties": {
        **OUTPUT_SCHEMA["properties"],
        "approval": {
            "type": "object",
            "description": "Only for a client that cannot ask the user: the preview's diff and token.",
            "properties": {
                "required": {"type": "boolean"},
                "token": {"type": "string"},
                "diff": {"type": "string"},
                "expires_at": {"type": "integer"},
            },
            "required": ["required", "token", "diff", "expires_at"],
        },
    },
}

REACT_PROMPT = types.Prompt(
    name="react",
    title="Answer as reactstep's agent",
    description="reactstep's ReAct system prompt, then your question about the project.",
    arguments=[
        types.PromptArgument(name="question", description="What to find out or change.", required=True)
    ],
)


def build_server(tools: list[dict[str, Any]], call: ToolCall, project_id: str | None = None) -> Server[Any]:
    """An MCP server for the manifest `tools`; project_id None: the project is the HTTP request URL's."""
    asking_tools = [mcp_tool(entry, token_argument=False) for entry in tools]
    token_tools = [mcp_tool(entry, token_argument=True) for entry in tools]
    approving = {entry["name"] for entry in tools if entry["requires_approval"]}

    def caller_of(ctx: ServerRequestContext[Any]) -> Caller:
        if project_id is not None:
            return Caller(project_id, LOCAL_CALLER)
        request = ctx.request
        assert request is not None  # the HTTP transport hands every request its HTTP request
        return Caller(request.path_params["project_id"], request.scope["state"]["owner"])

    async def list_tools(ctx: ServerRequestContext[Any], params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=asking_tools if can_ask(ctx) else token_tools)

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        name, arguments = params.name, dict(params.arguments or {})
        if name not in approving:
            return await run_tool(call, caller_of(ctx), name, arguments)
        if can_ask(ctx):
            return await run_asking(ctx, params, call, caller_of(ctx))
        return await approve_by_token(call, caller_of(ctx), name, arguments)

    async def list_resources(ctx: ServerRequestContext[Any], params: Any) -> types.ListResourcesResult:
        return types.ListResourcesResult(resources=[overview_resource(caller_of(ctx).project_id)])

    async def read_resource(
        ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        project = caller_of(ctx).project_id
        if params.uri != overview_uri(project):
            raise ValueError(f"unknown resource {params.uri}; this server has {overview_uri(project)}")
        answer = await call(request_for(project, "project_overview", {}), None)
        text = types.TextResourceContents(uri=params.uri, text=answer.observation, mime_type="text/markdown")
        return types.ReadResourceResult(contents=[text])

    server: Server[Any] = Server(
        "reactstep",
        version=package_version(),
        instructions=INSTRUCTIONS,
        cache_hints=CACHE_HINTS,
        # No tool declares an Mcp-Param header (x-mcp-header), so there is nothing to check them
        # against: without this the SDK walks the tool's schema on every call (or lists the tools).
        get_tool_input_schema=no_param_headers,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_read_resource=read_resource,
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
    )
    # The SDK opens an OpenTelemetry span per message by default; nothing here exports them, and it
    # was a tenth of a read_file call's time over MCP (bench/mcp_overhead.py).
    server.middleware.clear()
    return server


def no_param_headers(name: str) -> None:
    """No tool's input schema declares an Mcp-Param header."""
    return None


async def list_prompts(ctx: ServerRequestContext[Any], params: Any) -> types.ListPromptsResult:
    """prompts/list: the one prompt."""
    return types.ListPromptsResult(prompts=[REACT_PROMPT])


async def get_prompt(
    ctx: ServerRequestContext[Any], params: types.GetPromptRequestParams
) -> types.GetPromptResult:
    """prompts/get: the ReAct system prompt and the question, as one user message."""
    question = (params.arguments or {}).get("question", "")
    if params.name != REACT_PROMPT.name or not question.strip():
        raise ValueError("the one prompt is 'react', with a non-empty argument 'question'")
    text = types.TextContent(type="text", text=react_prompt(question))
    message = types.PromptMessage(role="user", content=text)
    return types.GetPromptResult(description=REACT_PROMPT.description, messages=[message])


def mcp_tool(entry: dict[str, Any], token_argument: bool) -> types.Tool:
    """One manifest entry as an MCP tool; a write takes approval_token where `token_argument`."""
    schema = entry["parameters"]
    writes = bool(entry["requires_approval"])
    if writes and token_argument:
        schema = {
            **schema,
            "properties": {**schema.get("properties", {}), APPROVAL_ARGUMENT: APPROVAL_SCHEMA},
        }
    read_only = bool(entry["read_only"])
    return types.Tool(
        name=entry["name"],
        description=entry["description"],
        input_schema=schema,
        output_schema=WRITE_OUTPUT_SCHEMA if writes else OUTPUT_SCHEMA,
        annotations=types.ToolAnnotations(
            read_only_hint=read_only,
            destructive_hint=not read_only,
            # an approved write repeated writes nothing more ("Already applied")
            idempotent_hint=read_only or writes,
            open_world_hint=False,
        ),
    )


async def run_tool(
    call: ToolCall, caller: Caller, name: str, arguments: dict[str, Any]
) -> types.CallToolResult:
    """One tools/call of a tool that does not write: the execute_action answer, or why it could not run."""
    answer = await attempt(call, caller, name, arguments)
    if isinstance(answer, types.CallToolResult):
        return answer
    return tool_result(answer.observation, answer.is_error)


def overview_uri(project_id: str) -> str:
    """The project overview's resource URI."""
    return f"reactstep://projects/{project_id}/overview"


def overview_resource(project_id: str) -> types.Resource:
    """The project overview as a listed resource."""
    return types.Resource(
        uri=overview_uri(project_id),
        name="project_overview",
        title=f"Overview of {project_id}",
        description="Languages, layout, entry points, most imported modules, tests and conventions.",
        mime_type="text/markdown",
    )
