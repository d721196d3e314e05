"""One ReAct step: render the prompt, ask the model, parse its reply into a step result.

max_iterations_left == 0  -> max_iterations_reached (no LLM call)
prepare_step: tools -> llm request and its model's facts (asked once) -> tool calling mode
              (text | native) -> loop warnings
              -> the project overview section when the request asks for it (overview_section)
              -> observations cut to head + tail -> prompt fitted to the context window (budget),
                 or as the request's prompt_fit pins it (a replay's: the recorded fit)
run_react_step: LLM call with retries inside the deadline (retries) -> interpret (outcome)
    -> final_answer | action_proposed | format_error | truncated_output | loop_detected
streaming.py runs the same prepared step with the reply streamed.
"""

import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from reactstep.contract.prompt_fit import PromptFit
from reactstep.contract.step import HistoryItem, LLMRequestSeen, ReactStepRequest, ReactStepResponse, Timing
from reactstep.service import logs
from reactstep.service.errors import ContextWindowExceeded
from reactstep.service.limits import MAX_REPLY_CHARS
from reactstep.service.llm.config import resolve_llm_request
from reactstep.service.llm.protocol import LLMGateway, LLMReply, LLMRequest, Message
from reactstep.service.llm.replies import cap_reply
from reactstep.service.llm.retries import Attempts, RetryPolicy, complete_with_retries
from reactstep.service.llm.server_facts import streams_tool_calls
from reactstep.service.settings import Settings
from reactstep.service.step.budget import (
    FittedPrompt,
    RenderPrompt,
    TokenMeter,
    cut_observations,
    fit_prompt,
    pinned_prompt,
    prompt_budget,
    prompt_limit,
)
from reactstep.service.step.llm_request_seen import llm_request_seen
from reactstep.service.step.loop_guard import loop_warnings, repeated_actions, repeated_format_errors
from reactstep.service.step.native_tools import (
    TOOLS_LEFT_OUT,
    ResolvedMode,
    provider_tools,
    renders_no_tools,
    resolve_mode,
)
from reactstep.service.step.outcome import StepContext, interpret
from reactstep.service.step.overview_section import overview_section
from reactstep.service.step.prompting import (
    PromptParts,
    render,
    render_manifest,
    render_messages,
    server_manifest,
    tool_prompts,
)
from reactstep.service.step.step_tools import step_tools
from reactstep.service.step.window import ModelWindow, asked_server, model_window
from reactstep.service.worker_threads import on_worker
from reactstep.tools.registry import ToolRegistry

UNSTREAMED = (
    "The model server cannot stream a reply that calls a tool: the reply was asked for whole and its "
    "thought sent in one piece."
)
LOOP_REPEATS = 3  # the same action and observation this often: a warning, then loop_detected
MAX_OBSERVATION_CHARS = 20_000  # ~5k tokens; a longer observation reaches the model as head + tail
OVERVIEW_MAX_CHARS = 8_000  # ~2,000 tokens of project overview in the system prompt


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
    max_reply_chars: int
    seen: LLMRequestSeen
    streams: bool = True
    """The model server streams this call's reply (False: a streamed step asks for it whole)."""
    prompt_fit: PromptFit | None = None
    tool_results: Literal["messages", "text"] | None = None
    """How a native step sent the earlier steps (None in text mode)."""
    """How the history was fitted to the window, when anything was elided or left out."""

    def attempts(self) -> Attempts:
        """A fresh retry budget for this step's LLM call."""
        return Attempts(self.retry_policy, self.retry_seed)


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
    if mode == "native":
        schemas = provider_tools(registry, request.client_tools)
        if renders_no_tools(server, llm_request, schemas):
            mode = "text"
            first_notes.append(TOOLS_LEFT_OUT)
        else:
            # The last step keeps the tools (the prompt's prefix stays the one the server evaluated) but
            # the model may not call one: it can only answer (final_step.j2 says so last).
            choice: Literal["auto", "none"] = "none" if request.max_iterations_left == 1 else "auto"
            llm_request = replace(llm_request, stop=(), tools=schemas, tool_choice=choice)
    repeated = repeated_actions(request.conversation_history, LOOP_REPEATS)
    warnings = loop_warnings(repeated)
    window = model_window(facts, server, llm_request, settings)
    chosen = request.llm_config.tool_results
    plain_history = mode == "native" and (chosen == "text" or (chosen is None and server.drops_tool_results))
    manifest = _manifest(request, registry, mode)
    llm_request, fit, notes = _fitted(
        request, settings, manifest, llm_request, mode, warnings, project_overview, window, plain_history
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
        max_reply_chars=MAX_REPLY_CHARS,
        seen=llm_request_seen(llm_request, manifest, request.include_llm_request),
        streams=not whole,
        prompt_fit=fit,
        tool_results=("text" if plain_history else "messages") if mode == "native" else None,
    )


def _fitted(
    request: ReactStepRequest,
    settings: Settings,
    manifest: str,
    llm_request: LLMRequest,
    mode: ResolvedMode,
    warnings: list[str],
    project_overview: str | None,
    window: ModelWindow,
    plain_history: bool,
) -> tuple[LLMRequest, PromptFit | None, list[str]]:
    """The call with its messages, cut and fitted to the model's `window` (or as the request's
    prompt_fit pins it: nothing counted), what fitting did, and notes on what that took."""
    history, cut = cut_observations(request.conversation_history, MAX_OBSERVATION_CHARS)
    overview = overview_section(request, project_overview, OVERVIEW_MAX_CHARS)
    parts = PromptParts(
        manifest=manifest,
        user_query=request.user_query,
        final_step=request.max_iterations_left == 1,
        native=mode == "native",
        tool_results_as_text=plain_history,
        notices=tuple(warnings),
        overview=overview.text,
    )
    pin = request.prompt_fit
    if pin is None:
        fitted = _counted(history, _renderer(parts), llm_request, window)
    else:
        fitted = pinned_prompt(history, _renderer(parts), pin.elided, pin.left_out)
    fitted_to = window.tokens if pin is None else None
    notes = [overview.note] if overview.note else []
    if window.source and fitted_to:
        notes.append(f"The prompt was fitted to a {window.tokens:,}-token window ({window.source}).")
    if plain_history:
        notes.append(
            "The model server's chat format leaves tool results out of the prompt: the earlier steps were "
            "sent as Action / Observation turns, so the model sees its observations."
        )
    notes += _prompt_notes(cut, fitted, fitted_to, MAX_OBSERVATION_CHARS)
    fit = None
    if fitted.elided or fitted.left_out:
        fit = PromptFit(window=fitted_to, elided=fitted.elided, left_out=fitted.left_out)
    return replace(llm_request, messages=fitted.messages), fit, notes


def _counted(
    history: Sequence[HistoryItem], render_prompt: RenderPrompt, llm_request: LLMRequest, window: ModelWindow
) -> FittedPrompt:
    """The prompt fitted by counting its tokens for the model's `window`; ContextWindowExceeded for a
    prompt over the window with the whole history left out (not sent: the model server would refuse
    it, or cut it where it chose)."""
    meter = TokenMeter(llm_request.model, llm_request.tools, window.count, window.tools_tokens)
    budget = prompt_budget(window.tokens, llm_request.max_tokens)
    limit = prompt_limit(window.tokens, llm_request.max_tokens)
    fitted = fit_prompt(history, render_prompt, meter, budget, limit)
    if fitted.prompt_tokens is not None and fitted.prompt_tokens > window.tokens:
        said = window.source or "litellm's table"
        source = f"{window.setting}; raise it if the model takes more" if window.setting else said
        raise ContextWindowExceeded(
            f"the prompt is {fitted.prompt_tokens:,} tokens with no conversation history at all, over the "
            f"{window.tokens:,}-token context window of {llm_request.model} ({source}); send a shorter "
            "user_query or fewer client_tools"
        )
    return fitted


async def run_react_step(
    request: ReactStepRequest,
    settings: Settings,
    llm: LLMGateway,
    registry: ToolRegistry,
    project_overview: str | None = None,
) -> ReactStepResponse:
    """Take one reasoning step for the request (`project_overview`: see prepare_step)."""
    prepared = await on_worker(prepare_step, request, settings, registry, project_overview)
    if isinstance(prepared, ReactStepResponse):
        return prepared
    attempts = prepared.attempts()
    llm_started = time.perf_counter()
    reply = await complete_with_retries(llm, prepared.llm_request, attempts)
    return finish_step(prepared, reply, attempts.retries, llm_started)


def may_stream(llm_request: LLMRequest) -> bool:
    """Whether this call's reply may be streamed: not a reply that may call a tool from a server that
    sent an empty stream for one before."""
    return not llm_request.tools or streams_tool_calls(llm_request.api_base, llm_request.model)


def finish_step(
    prepared: PreparedStep, reply: LLMReply, retries: int, llm_started: float
) -> ReactStepResponse:
    """The response for the reply, with model, usage, timing, notes (and the prompt when debugging)."""
    finished = time.perf_counter()
    reply, cut_note = cap_reply(reply, prepared.max_reply_chars)
    response = interpret(reply, prepared.context)
    response.model = prepared.llm_request.model
    response.usage = reply.usage
    response.timing = Timing(
        llm_ms=round((finished - llm_started) * 1000, 3),
        total_ms=round((finished - prepared.started) * 1000, 3),
        retries=retries,
    )
    notes = [*prepared.notes, *_reply_notes(reply, cut_note), *(response.notes or [])]
    response.notes = notes or None
    response.llm_request = prepared.seen
    response.prompt_fit = prepared.prompt_fit
    response.tool_results = prepared.tool_results
    if prepared.debug_prompt:
        response.prompt = prepared.llm_request.messages
    logs.note(step_status=response.status, retries=retries)
    return response


def step_body(response: ReactStepResponse) -> dict[str, Any]:
    """The JSON body of a react_step response (streamed or not)."""
    return response.model_dump(mode="json", exclude_none=True)


def _manifest(request: ReactStepRequest, registry: ToolRegistry, mode: ResolvedMode) -> str:
    if mode == "native":
        return ""  # the tools travel as JSON Schemas
    if request.available_tools_prompt_segment is not None:
        return request.available_tools_prompt_segment
    if not request.client_tools:
        return server_manifest(registry)
    return render_manifest(tool_prompts(registry, request.client_tools))


def _renderer(parts: PromptParts) -> RenderPrompt:
    """The prompt's messages for a history whose `elided` oldest observations are elided, after
    `left_out` older items not sent."""

    def render_prompt(items: Sequence[HistoryItem], elided: int, left_out: int) -> list[Message]:
        notices = parts.notices
        if left_out:
            notices = (*notices, render("left_out_notice", count=left_out))
        if elided:
            notices = (*notices, render("elision_notice", count=elided))
        return render_messages(replace(parts, notices=notices), items)

    return render_prompt


def _prompt_notes(cut: int, fitted: FittedPrompt, window: int | None, limit: int) -> list[str]:
    """What cutting and fitting did (`window`: the one fitted to; None: as the request pinned it)."""
    notes = []
    if cut:
        notes.append(f"{cut} observation(s) longer than {limit} characters were cut to head + tail.")
    how = f"to fit the {window}-token context window" if window else "as the request's prompt_fit pinned"
    if observations := fitted.elided - fitted.elided_replies:
        notes.append(f"The {observations} oldest observation(s) were elided {how}.")
    if fitted.elided_replies:
        notes.append(f"The {fitted.elided_replies} oldest unusable reply(ies) were elided {how}.")
    if fitted.left_out:
        room = " with room for a reply" if window else ""
        notes.append(f"The {fitted.left_out} oldest history item(s) were left out {how}{room}.")
    if fitted.over_by:
        notes.append(
            f"The prompt is still {fitted.over_by} tokens over its budget with every observation elided."
        )
    return notes


def _reply_notes(reply: LLMReply, cut_note: str | None) -> list[str]:
    notes = [cut_note] if cut_note else []
    if reply.stop_dropped:
        notes.insert(0, "The provider rejected stop sequences; the step was sent without them.")
    return notes
