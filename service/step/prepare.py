"""Everything a ReAct step decides before the LLM is called, on one worker thread.

prepare ─► one hop off the event loop: each client tool's parameters a valid JSON Schema (422, in Rust:
           3 ms for 470 KB of schema, off the loop) ─► the project exists (404 before any LLM call)
           ─► its overview, when the request asks for it ─► prepare_step
prepare_step: max_iterations_left == 0 ─► max_iterations_reached (no LLM call)
              tools (the server's + the client's) ─► llm request and its model's facts (asked once)
              ─► tool calling mode (text | native; native falls back to text when the model server's
                 chat format drops the tools) ─► loop warnings (loop_guard) ─► the model's window
              ─► the prompt rendered and fitted to it (fit), or as the request's prompt_fit pins it
              ─► PreparedStep: the call, what interpreting its reply needs, the notes so far
call.py then asks the model, interpret.py reads its reply; stream.py does both with the reply streamed.
"""

import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from reactstep.contract.llm_config import ToolCallingMode
from reactstep.contract.prompt_fit import PromptFit
from reactstep.contract.step import ClientTool, ReactStepRequest, ReactStepResponse
from reactstep.contract.step_report import LLMRequestSeen
from reactstep.service.budgets.limits import KeyLimits
from reactstep.service.budgets.spending import held_gateway
from reactstep.service.errors import ValidationFailed
from reactstep.service.llm.config import resolve_llm_request
from reactstep.service.llm.protocol import LLMGateway, LLMRequest, ModelFacts
from reactstep.service.llm.server_facts import UNKNOWN, ServerFacts, streams_tool_calls, tool_tokens
from reactstep.service.logs import context as logs
from reactstep.service.runtime import Runtime
from reactstep.service.schemas import check_client_tools
from reactstep.service.settings import Settings
from reactstep.service.step.fit import fit_step_prompt
from reactstep.service.step.llm_request_seen import llm_request_seen
from reactstep.service.step.loop_guard import loop_warnings, repeated_actions, repeated_format_errors
from reactstep.service.step.prompt import render_manifest, server_manifest, tool_prompts
from reactstep.service.step.window import asked_server, model_window
from reactstep.service.worker_threads import on_worker
from reactstep.service.workspace.projects import require_project
from reactstep.tools.index.overview import load_overview
from reactstep.tools.registry import ToolRegistry

ResolvedMode = Literal["text", "native"]
UNSTREAMED = (
    "The model server cannot stream a reply that calls a tool: the reply was asked for whole and its "
    "thought sent in one piece."
)
TOOLS_LEFT_OUT = (
    "The model server's chat format leaves tool schemas out of the prompt (they measured 0 tokens there), "
    "so the step ran in text mode: the prompt lists the tools and the model answers with an Action line. "
    "Start the server with a chat format that renders tools (llama-cpp-python: --chat_format "
    "chatml-function-calling) for native tool calling."
)
LOOP_REPEATS = 3  # the same action and observation this often: a warning, then loop_detected
RETRY_MAX_S = 8.0  # the longest wait: four doublings of 0.5 s, well inside DEFAULT_DEADLINE_S
DEFAULT_DEADLINE_S = 60.0
TIMEOUT_SETTING = "REACTSTEP_LLM_TIMEOUT_S"


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to retry the step's LLM call (call.py's Attempts follow it)."""

    max_retries: int
    deadline_s: float
    base_delay_s: float
    max_delay_s: float
    deadline_setting: str = "REACTSTEP_LLM_DEADLINE_S"
    """What a user raises when the deadline is what cut the LLM off (it follows the timeout unless set)."""

    @classmethod
    def from_settings(cls, settings: Settings, timeout_s: float) -> "RetryPolicy":
        """The policy the settings ask for, for calls of this timeout: the deadline is
        REACTSTEP_LLM_DEADLINE_S, else the timeout, at least DEFAULT_DEADLINE_S (room for retries)."""
        deadline_s = settings.llm_deadline_s
        return cls(
            max_retries=settings.llm_max_retries,
            deadline_s=deadline_s if deadline_s is not None else max(timeout_s, DEFAULT_DEADLINE_S),
            deadline_setting="REACTSTEP_LLM_DEADLINE_S" if deadline_s is not None else TIMEOUT_SETTING,
            base_delay_s=settings.llm_retry_base_s,
            max_delay_s=RETRY_MAX_S,
        )


@dataclass(frozen=True)
class StepTools:
    """The tools one request may call: JSON Schemas by name, and which the client runs."""

    schemas: dict[str, dict[str, Any]]
    client_names: frozenset[str]
    approval_names: frozenset[str] = frozenset()  # server tools whose calls the user must approve
    # Server tool name -> the argument names models write for its parameters (ToolSpec.aliases).
    aliases: Mapping[str, Mapping[str, str]] = field(default_factory=dict)


@dataclass(frozen=True)
class StepContext:
    """What interpreting a reply needs to know about the request."""

    session_id: str
    tools: StepTools
    mode: ResolvedMode
    max_tokens: int
    stuck: frozenset[str] = frozenset()  # action_key of each action the history shows looping
    stuck_replies: frozenset[tuple[str, str]] = frozenset()  # (raw_output, format_error) repeated
    plain_answer: bool = False  # reply_format native_text: a reply with no call is the answer


@dataclass(frozen=True)
class PreparedStep:
    """Everything decided before the LLM is called."""

    llm_request: LLMRequest
    context: StepContext
    notes: tuple[str, ...]
    retry_policy: RetryPolicy
    retry_seed: str
    debug_prompt: bool
    started: float
    seen: LLMRequestSeen
    streams: bool = True
    """The model server streams this call's reply (False: a streamed step asks for it whole)."""
    prompt_fit: PromptFit | None = None
    """How the history was fitted to the window, when anything was elided or left out."""
    tool_results: Literal["messages", "text"] | None = None
    """How a native step sent the earlier steps (None in text mode)."""
    gateway: LLMGateway | None = None
    """The gateway that records the step's spending on the caller's key (budgets/spending.py), when
    the key has limits; None: the runtime's."""


async def prepare(
    request: ReactStepRequest, runtime: Runtime, limits: KeyLimits | None = None
) -> PreparedStep | ReactStepResponse:
    """The step made ready in one hop off the event loop: the project checked, its overview read when
    asked, the call decided (or the response itself when no call is needed), and the call held against
    the caller's key's `limits` (429 before any LLM call)."""
    return await on_worker(_prepared, request, runtime, limits)


def _prepared(
    request: ReactStepRequest, runtime: Runtime, limits: KeyLimits | None
) -> PreparedStep | ReactStepResponse:
    check_client_tools(request)
    require_project(request.project_id, runtime)  # 404 before any LLM call
    overview = None
    if request.include_project_overview and request.max_iterations_left:
        overview = load_overview(runtime.store, request.project_id)
    prepared = prepare_step(request, runtime.settings, runtime.registry, overview)
    if isinstance(prepared, ReactStepResponse) or request.user_api_keys.llmKey is not None:
        return prepared  # no call, or the caller's own money: budgets apply to service keys
    held = held_gateway(
        runtime.store, runtime.llm, limits, prepared.llm_request, prepared.retry_policy.deadline_s
    )
    return prepared if held is None else replace(prepared, gateway=held)


def prepare_step(
    request: ReactStepRequest,
    settings: Settings,
    registry: ToolRegistry,
    project_overview: str | None = None,
) -> PreparedStep | ReactStepResponse:
    """The LLM call to make, or the response itself when no call is needed.

    `project_overview` is the project's stored overview (None when there is none); it reaches the
    prompt only when the request sets include_project_overview.
    """
    started = time.perf_counter()
    if request.max_iterations_left == 0:
        logs.note(step_status="max_iterations_reached")
        return ReactStepResponse(session_id=request.session_id, status="max_iterations_reached")
    tools = step_tools(request, registry)
    llm_request, facts = resolve_llm_request(request.llm_config, request.user_api_keys, settings)
    mode = resolve_mode(request.llm_config.tool_calling or settings.llm_tool_calling, facts)
    server = asked_server(facts, llm_request)
    first_notes: list[str] = []
    measured = None  # what the tool schemas add to the prompt, as the model server measured them
    if mode == "native":
        schemas = provider_tools(registry, request.client_tools)
        measured = measured_tools(server, llm_request, schemas)
        if measured == 0:  # its chat format drops them: a native step would show the model no tool
            mode = "text"
            first_notes.append(TOOLS_LEFT_OUT)
        else:
            # The last step keeps the tools (the prompt's prefix stays the one the server evaluated) but
            # the model may not call one: it can only answer (final_step.j2 says so last).
            choice: Literal["auto", "none"] = "none" if request.max_iterations_left == 1 else "auto"
            llm_request = replace(llm_request, stop=(), tools=schemas, tool_choice=choice)
    repeated = repeated_actions(request.conversation_history, LOOP_REPEATS)
    warnings = loop_warnings(repeated)
    window = model_window(facts, server, settings, measured if mode == "native" else None)
    chosen = request.llm_config.tool_results
    plain_history = mode == "native" and (chosen == "text" or (chosen is None and server.drops_tool_results))
    manifest = _manifest(request, registry, mode)
    native = mode == "native"
    llm_request, fit, notes = fit_step_prompt(
        request, manifest, llm_request, native, warnings, project_overview, window, plain_history
    )
    notes = first_notes + notes
    notes += [
        f"The prompt warns that {item.action} ran {item.count} times, observing the same."
        for item in repeated
    ]
    whole = mode == "native" and llm_request.tool_choice == "auto" and not may_stream(llm_request)
    if whole and request.stream:
        notes.append(UNSTREAMED)
    context = StepContext(
        session_id=request.session_id,
        tools=tools,
        mode=mode,
        max_tokens=llm_request.max_tokens,
        stuck=frozenset(item.key for item in repeated),
        stuck_replies=repeated_format_errors(request.conversation_history, LOOP_REPEATS),
        plain_answer=request.llm_config.reply_format == "native_text",
    )
    return PreparedStep(
        llm_request=llm_request,
        context=context,
        notes=tuple(notes),
        retry_policy=RetryPolicy.from_settings(settings, llm_request.timeout_s),
        retry_seed=f"{request.session_id}:{len(request.conversation_history)}",
        debug_prompt=settings.debug_prompt,
        started=started,
        seen=llm_request_seen(llm_request, manifest, request.include_llm_request),
        streams=not whole,
        prompt_fit=fit,
        tool_results=("text" if plain_history else "messages") if mode == "native" else None,
    )


def step_tools(request: ReactStepRequest, registry: ToolRegistry) -> StepTools:
    """Server tools plus the request's client tools; a client tool may not shadow a server one."""
    schemas = registry.schemas()
    server_names = set(schemas)
    for tool in request.client_tools:
        if tool.name in schemas:
            whose = "a server tool" if tool.name in server_names else "another client tool"
            raise ValidationFailed(f"client tool {tool.name!r} has the name of {whose}")
        schemas[tool.name] = tool.parameters
    approval_names = frozenset(spec.name for spec in registry.specs if spec.requires_approval)
    client_names = frozenset(tool.name for tool in request.client_tools)
    return StepTools(schemas, client_names, approval_names, registry.aliases())


def resolve_mode(mode: ToolCallingMode, facts: ModelFacts) -> ResolvedMode:
    """text or native; auto follows whether the model does function calling."""
    if mode == "auto":
        return "native" if facts.native_tools else "text"
    return mode


def measured_tools(
    server: ServerFacts, llm_request: LLMRequest, schemas: tuple[dict[str, Any], ...]
) -> int | None:
    """The tokens these tool schemas add to the prompt as the model server renders them (0: its chat
    format drops them); None when no server was asked or it did not say."""
    if server is UNKNOWN or not llm_request.api_base or not schemas:
        return None
    return tool_tokens(llm_request.api_base, llm_request.model, llm_request.api_key, schemas)


def provider_tools(registry: ToolRegistry, client_tools: Iterable[ClientTool]) -> tuple[dict[str, Any], ...]:
    """Server tools, then the request's client tools, as OpenAI-style function schemas (native mode)."""
    server = [_function(spec.name, spec.description, spec.json_schema()) for spec in registry.specs]
    client = [_function(tool.name, tool.description, tool.parameters) for tool in client_tools]
    return tuple(server + client)


def _function(name: str, description: str, parameters: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {"name": name, "description": description, "parameters": parameters},
    }


def may_stream(llm_request: LLMRequest) -> bool:
    """Whether this call's reply may be streamed: not a reply that may call a tool from a server that
    sent an empty stream for one before."""
    return not llm_request.tools or streams_tool_calls(llm_request.api_base, llm_request.model)


def _manifest(request: ReactStepRequest, registry: ToolRegistry, mode: ResolvedMode) -> str:
    if mode == "native":
        return ""  # the tools travel as JSON Schemas
    if request.available_tools_prompt_segment is not None:
        return request.available_tools_prompt_segment
    if not request.client_tools:
        return server_manifest(registry)
    return render_manifest(tool_prompts(registry, request.client_tools))
