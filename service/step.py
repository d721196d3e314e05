"""One ReAct step: render the prompt, ask the model, parse its reply into a step result.

max_iterations_left == 0  -> max_iterations_reached (no LLM call)
render_messages -> LLMGateway.complete -> parse_reply
    -> final_answer | action_proposed (executor server|client) | format_error (+ corrective message)
"""

import time
from dataclasses import dataclass
from typing import Any

from service.errors import ValidationFailed
from service.llm import LLMGateway, LLMReply
from service.llm_config import resolve_llm_request
from service.parsing import FormatError, ParsedReply, parse_reply
from service.prompting import render_format_error, render_manifest, render_messages, tool_prompts
from service.schemas import ActionDetails, Executor, ReactStepRequest, ReactStepResponse, Timing
from service.settings import Settings
from tools.registry import ToolRegistry


@dataclass(frozen=True)
class StepTools:
    """The tools one request may call: JSON Schemas by name, and which the client runs."""

    schemas: dict[str, dict[str, Any]]
    client_names: frozenset[str]


def step_tools(request: ReactStepRequest, registry: ToolRegistry) -> StepTools:
    """Server tools plus the request's client tools; a client tool may not shadow a server one."""
    schemas = registry.schemas()
    for tool in request.client_tools:
        if tool.name in schemas:
            raise ValidationFailed(f"client tool {tool.name!r} has the name of a server tool")
        schemas[tool.name] = tool.parameters
    return StepTools(schemas, frozenset(tool.name for tool in request.client_tools))


def build_messages(request: ReactStepRequest, registry: ToolRegistry) -> list[dict[str, str]]:
    """The exact messages the model will read for this request."""
    manifest = request.available_tools_prompt_segment
    if manifest is None:
        manifest = render_manifest(tool_prompts(registry, request.client_tools))
    final_step = request.max_iterations_left == 1
    return render_messages(manifest, request.user_query, request.conversation_history, final_step)


async def run_react_step(
    request: ReactStepRequest, settings: Settings, llm: LLMGateway, registry: ToolRegistry
) -> ReactStepResponse:
    """Take one reasoning step for the request."""
    started = time.perf_counter()
    if request.max_iterations_left == 0:
        return ReactStepResponse(session_id=request.session_id, status="max_iterations_reached")
    if len(request.conversation_history) > settings.max_history_items:
        raise ValidationFailed(
            f"conversation_history has {len(request.conversation_history)} items; "
            f"the limit is {settings.max_history_items}"
        )
    tools = step_tools(request, registry)
    messages = build_messages(request, registry)
    llm_request = resolve_llm_request(request.llm_config, request.user_api_keys, settings, messages)
    reply = await llm.complete(llm_request)
    response = _interpret(reply, tools, request.session_id)
    response.model = llm_request.model
    response.usage = reply.usage
    total_ms = (time.perf_counter() - started) * 1000
    response.timing = Timing(llm_ms=round(reply.elapsed_ms, 3), total_ms=round(total_ms, 3))
    if settings.debug_prompt:
        response.prompt = messages
    return response


def _interpret(reply: LLMReply, tools: StepTools, session_id: str) -> ReactStepResponse:
    try:
        parsed = parse_reply(reply.text, tools.schemas)
    except FormatError as exc:
        return ReactStepResponse(
            session_id=session_id,
            status="format_error",
            thought=exc.thought,
            raw_output=reply.text,
            format_error=render_format_error(exc.reason, tools.schemas),
        )
    return _result(parsed, tools, session_id, reply.text)


def _result(parsed: ParsedReply, tools: StepTools, session_id: str, raw_output: str) -> ReactStepResponse:
    if parsed.action is None:
        return ReactStepResponse(
            session_id=session_id,
            status="final_answer",
            thought=parsed.thought,
            final_answer=parsed.final_answer,
            raw_output=raw_output,
        )
    action = parsed.action
    executor: Executor = "client" if action.tool_name in tools.client_names else "server"
    details = ActionDetails(
        tool_name=action.tool_name,
        tool_args=action.tool_args,
        raw_action_string=action.raw_action_string,
        executor=executor,
    )
    return ReactStepResponse(
        session_id=session_id,
        status="action_proposed",
        thought=parsed.thought,
        action_details=details,
        raw_output=raw_output,
    )
