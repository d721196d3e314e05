"""A write over MCP: the person approves the diff through the client wherever the client can ask.

    2026-07-28, elicitation     first tools/call -> preview -> input_required: an elicitation showing
                                the diff (approve / reject) and requestState, a token bound to the
                                caller's key, the project, the tool, the arguments' digest, the file's
                                version and an expiry (tools/writes/approval.py, Approvals.bound_to)
                                retry with the answer and requestState -> approve: the write (once: a
                                second use finds the file past that version, "Already applied");
                                reject, or no answer: nothing is written; an altered, expired or
                                another caller's requestState: nothing is written, and the reason
    2025 revisions, the client  preview -> elicitation/create with the same question on the open
    declared elicitation        connection -> approve: the write with a token the model never sees
    no elicitation declared     the preview returns the diff and approval_token to the model (the
                                REST flow): an approval is only as good as the client's own prompt
A token that writes by itself never reaches the model where the client can ask: in those modes the
tool takes no approval_token argument, and the bound token is no approval_token to execute_action.
"""

from typing import Any

import mcp.types as types
from mcp.server import ServerRequestContext
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from reactstep.contract.actions import ExecuteActionResponse
from reactstep.service.mcp.results import Caller, ToolCall, attempt, error_result, tool_result

APPROVAL_ARGUMENT = "approval_token"
APPROVAL_SCHEMA = {
    "type": "string",
    "description": "Leave out to preview the change (nothing is written); to apply it once the user "
    "approved the diff, repeat the same call with the token the preview returned.",
}
QUESTION_KEY = "approve_write"  # the input request's key in input_required
DECISION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "decision": {
            "type": "string",
            "title": "Apply this change?",
            "enum": ["approve", "reject"],
        }
    },
    "required": ["decision"],
}
NOT_APPROVED = (
    "The user did not approve this change, so nothing was written. Ask the user what they want "
    "instead of proposing the same change again."
)
NO_TOKEN_HERE = (
    "Error: {name}: approval_token is not taken here: this client asks the user to approve each "
    "change. Call {name} without it."
)


def can_ask(ctx: ServerRequestContext[Any]) -> bool:
    """Whether this request's client can ask the person: it declared form elicitation (on 2026-07-28
    in the request's _meta, on the 2025 revisions in initialize, which stateless HTTP never sees)."""
    capabilities = ctx.session.client_capabilities
    elicitation = capabilities.elicitation if capabilities is not None else None
    return elicitation is not None and (elicitation.form is not None or elicitation.url is None)


async def run_asking(
    ctx: ServerRequestContext[Any], params: types.CallToolRequestParams, call: ToolCall, caller: Caller
) -> types.CallToolResult | types.InputRequiredResult:
    """A write for a client that can ask: the question in the result (2026-07-28) or by elicitation."""
    name, arguments = params.name, dict(params.arguments or {})
    if APPROVAL_ARGUMENT in arguments:
        return error_result(NO_TOKEN_HERE.format(name=name))
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        if params.request_state is None:
            return await _ask_in_result(call, caller, name, arguments)
        if not approved((params.input_responses or {}).get(QUESTION_KEY)):
            return tool_result(NOT_APPROVED, is_error=False)
        return _written(await attempt(call, caller, name, arguments, params.request_state, bound=True))
    return await _ask_by_elicitation(ctx, call, caller, name, arguments)


async def approve_by_token(
    call: ToolCall, caller: Caller, name: str, arguments: dict[str, Any]
) -> types.CallToolResult:
    """A write for a client that cannot ask: the REST flow, the token handed to the model."""
    token = arguments.pop(APPROVAL_ARGUMENT, None)
    answer = await attempt(call, caller, name, arguments, token)
    if isinstance(answer, types.CallToolResult) or answer.approval is None:
        return _written(answer)
    approval = answer.approval.model_dump(mode="json")
    result = tool_result(answer.observation, is_error=False, approval=approval)
    result.content.append(types.TextContent(type="text", text=approval_note(name, answer.approval.token)))
    return result


def approval_note(name: str, token: str) -> str:
    """What the model reads after a preview: how to apply the change once the user said yes."""
    return (
        f"To apply this change after the user approved the diff, call {name} again with the same "
        f'arguments and approval_token="{token}".'
    )


def question(name: str, caller: Caller, diff: str) -> str:
    """What the person reads: which tool, which project, the diff."""
    return f"{name} wants to change project {caller.project_id}. Apply this change?\n\n{diff}"


def approved(answer: Any) -> bool:
    """Whether the person's answer is an accepted form saying approve."""
    return (
        isinstance(answer, types.ElicitResult)
        and answer.action == "accept"
        and (answer.content or {}).get("decision") == "approve"
    )


async def _ask_in_result(
    call: ToolCall, caller: Caller, name: str, arguments: dict[str, Any]
) -> types.CallToolResult | types.InputRequiredResult:
    """The preview, and the question with its requestState instead of a result."""
    answer = await attempt(call, caller, name, arguments, bound=True)
    if isinstance(answer, types.CallToolResult) or answer.approval is None:
        return _written(answer)  # nothing to ask: no change, or an error
    form = types.ElicitRequestFormParams(
        message=question(name, caller, answer.approval.diff), requested_schema=DECISION_SCHEMA
    )
    return types.InputRequiredResult(
        input_requests={QUESTION_KEY: types.ElicitRequest(params=form)}, request_state=answer.approval.token
    )


async def _ask_by_elicitation(
    ctx: ServerRequestContext[Any], call: ToolCall, caller: Caller, name: str, arguments: dict[str, Any]
) -> types.CallToolResult:
    """The preview, the question on the connection, then the write if the person approved."""
    answer = await attempt(call, caller, name, arguments, bound=True)
    if isinstance(answer, types.CallToolResult) or answer.approval is None:
        return _written(answer)
    message = question(name, caller, answer.approval.diff)
    try:
        reply = await ctx.session.elicit_form(message, DECISION_SCHEMA, related_request_id=ctx.request_id)
    except Exception as exc:  # the client failed to answer: nothing is written
        return error_result(
            f"Error: the user could not be asked ({type(exc).__name__}); nothing was written."
        )
    if not approved(reply):
        return tool_result(NOT_APPROVED, is_error=False)
    return _written(await attempt(call, caller, name, arguments, answer.approval.token, bound=True))


def _written(answer: ExecuteActionResponse | types.CallToolResult) -> types.CallToolResult:
    """An answer without a question as its result."""
    if isinstance(answer, types.CallToolResult):
        return answer
    return tool_result(answer.observation, answer.is_error)
