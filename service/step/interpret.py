"""The step's outcome from the model's reply, read: which status, and what the client appends next.

finish_step: the reply as call.py read it (parsing.reply.read_reply: the text grammar, or a native tool
             call through the same grammar) ─► the response with model, usage, timing, notes (and
             the prompt when debugging) ─► its status and retries on the request's log line
  ├─ no action or answer ─► format_error (+ corrective message)
  │                         └ the reply and message the history holds `loop_repeats` times ─► loop_detected
  │                         └ finish_reason length ─► truncated_output (+ corrective message, note)
  ├─ final answer ─► final_answer        └ finish_reason length ─► truncated_output
  └─ action ─► stuck in a loop (loop_guard) ─► loop_detected (the action is not run)
            └► action_proposed (executor server | client)
"""

from reactstep.contract.history import ActionDetails, Executor
from reactstep.contract.step import ReactStepResponse
from reactstep.contract.step_report import Timing, Usage
from reactstep.service.llm.protocol import LLMReply
from reactstep.service.logs import context as logs
from reactstep.service.parsing.reply import FormatError, ParsedAction, ParsedReply, ReadReply
from reactstep.service.step.loop_guard import action_key
from reactstep.service.step.prepare import PreparedStep, StepContext
from reactstep.service.step.prompt import render, render_format_error


def finish_step(
    prepared: PreparedStep,
    reply: LLMReply,
    read: ReadReply | FormatError,
    cut_note: str | None,
    timing: Timing,
) -> ReactStepResponse:
    """The response for the reply read, with model, usage, timing, notes (and the prompt when debugging)."""
    response = interpret(reply, read, prepared.context)
    response.model = prepared.llm_request.model
    response.usage = reply.usage
    response.budget = reply.budget
    response.timing = timing
    notes = [*prepared.notes, *_reply_notes(reply, cut_note), *(response.notes or [])]
    response.notes = notes or None
    response.llm_request = prepared.seen
    response.prompt_fit = prepared.prompt_fit
    response.tool_results = prepared.tool_results
    if prepared.debug_prompt:
        response.prompt = prepared.llm_request.messages
    logs.note(step_status=response.status, retries=timing.retries)
    return response


def _reply_notes(reply: LLMReply, cut_note: str | None) -> list[str]:
    notes = [cut_note] if cut_note else []
    if reply.stop_dropped:
        notes.insert(0, "The provider rejected stop sequences; the step was sent without them.")
    return notes


def interpret(reply: LLMReply, read: ReadReply | FormatError, context: StepContext) -> ReactStepResponse:
    """The response for one reply read (model, usage and timing are the caller's to add)."""
    if isinstance(read, FormatError):
        raw_output = str(getattr(read, "raw_output", reply.text))
        if reply.finish_reason == "length":
            return _truncated(read.thought, raw_output, context, reply.usage)
        return _format_error(read.thought, raw_output, read.reason, context)
    parsed = read.parsed
    notes = [f"The model asked for {read.ignored_calls + 1} tool calls at once; only the first is used."]
    notes = (notes if read.ignored_calls else []) + [f"Parser: {note}" for note in parsed.notes]
    if parsed.action is None:
        if reply.finish_reason == "length":
            return _truncated(parsed.thought, read.raw_output, context, reply.usage)
        return _response(
            context,
            status="final_answer",
            thought=parsed.thought,
            final_answer=parsed.final_answer,
            raw_output=read.raw_output,
            notes=notes or None,
        )
    return _action(parsed, parsed.action, read.raw_output, context, notes)


def _action(
    parsed: ParsedReply, action: ParsedAction, raw_output: str, context: StepContext, notes: list[str]
) -> ReactStepResponse:
    executor: Executor = "client" if action.tool_name in context.tools.client_names else "server"
    details = ActionDetails(
        tool_name=action.tool_name,
        tool_args=action.tool_args,
        raw_action_string=action.raw_action_string,
        executor=executor,
        requires_approval=action.tool_name in context.tools.approval_names,
    )
    looping = action_key(action.tool_name, action.tool_args) in context.stuck
    if looping:
        notes.append(
            "The model proposed an action it had already run with the same result; the loop ends here."
        )
    return _response(
        context,
        status="loop_detected" if looping else "action_proposed",
        thought=parsed.thought,
        action_details=details,
        raw_output=raw_output,
        notes=notes or None,
    )


def _format_error(thought: str, raw_output: str, reason: str, context: StepContext) -> ReactStepResponse:
    message = render_format_error(reason, context.tools.schemas)
    looping = (raw_output.strip(), message) in context.stuck_replies
    notes = ["The model sent again a reply it had already been told it could not use; the loop ends here."]
    return _response(
        context,
        status="loop_detected" if looping else "format_error",
        thought=thought,
        raw_output=raw_output,
        format_error=message,
        notes=notes if looping else None,
    )


def _truncated(thought: str, raw_output: str, context: StepContext, usage: Usage) -> ReactStepResponse:
    reason = render("truncated", max_tokens=context.max_tokens)
    note = (
        f"The reply reached max_tokens ({context.max_tokens}) before its action or answer was complete; "
        "raise llm_config.max_tokens if this repeats."
    )
    if not usage.estimated and 0 < usage.completion_tokens < context.max_tokens:
        used = usage.prompt_tokens + usage.completion_tokens
        note = (
            f"The reply stopped after {usage.completion_tokens} tokens, short of max_tokens "
            f"({context.max_tokens}): the prompt ({usage.prompt_tokens}) and the reply filled the model's "
            f"context window ({used} tokens). Send a shorter conversation_history, or give the model "
            "server a larger window (and REACTSTEP_LLM_DEFAULT_CONTEXT_WINDOW the same)."
        )
    return _response(
        context,
        status="truncated_output",
        thought=thought,
        raw_output=raw_output,
        format_error=render_format_error(reason, context.tools.schemas),
        notes=[note],
    )


def _response(context: StepContext, **fields: object) -> ReactStepResponse:
    return ReactStepResponse.model_validate(
        {"session_id": context.session_id, "tool_calling": context.mode, **fields}
    )
