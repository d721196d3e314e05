"""Native tool calling: tools go to the provider as JSON Schemas, and its tool call comes back as the
same parsed action the text protocol gives.

    tool_calling auto ─► native when litellm's table says the model calls functions (ModelFacts), else text
    native, but the model server's chat format renders no tools (measured 0 tokens) ─► text, with a note
    reply with tool calls ─► the first one, as a JSON action blob ─► parse_reply (the one grammar:
        same schema checks, same error messages) ─► action; thought = the content's reasoning
    reply without tool calls ─► parse_reply(content): a Final Answer, a text Action, or a format error
    raw_output ─► the text syntax ("Thought: ...\\nAction: tool(arg=...)"), so a trace replays in either mode
"""

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from reactstep.contract.step import ClientTool, ToolCallingMode
from reactstep.service.llm.protocol import LLMReply, LLMRequest, ModelFacts
from reactstep.service.llm.server_facts import UNKNOWN, ServerFacts, tool_tokens
from reactstep.service.parsing.arg_drift import Aliases
from reactstep.service.parsing.reply import FormatError, ParsedAction, ParsedReply, parse_reply, render_action
from reactstep.tools.registry import ToolRegistry

ResolvedMode = Literal["text", "native"]


@dataclass(frozen=True)
class NativeParse:
    """A native reply, parsed, with its text-syntax rendering and how many calls were left unused."""

    parsed: ParsedReply
    raw_output: str
    ignored_calls: int = 0


def resolve_mode(mode: ToolCallingMode, facts: ModelFacts) -> ResolvedMode:
    """text or native; auto follows whether the model does function calling."""
    if mode == "auto":
        return "native" if facts.native_tools else "text"
    return mode


TOOLS_LEFT_OUT = (
    "The model server's chat format leaves tool schemas out of the prompt (they measured 0 tokens there), "
    "so the step ran in text mode: the prompt lists the tools and the model answers with an Action line. "
    "Start the server with a chat format that renders tools (llama-cpp-python: --chat_format "
    "chatml-function-calling) for native tool calling."
)


def renders_no_tools(
    server: ServerFacts, llm_request: LLMRequest, schemas: tuple[dict[str, Any], ...]
) -> bool:
    """Whether the model server measured these tool schemas at 0 tokens: its chat format drops them, and
    a native step would show the model no tool at all."""
    if server is UNKNOWN or not llm_request.api_base or not schemas:
        return False
    return tool_tokens(llm_request.api_base, llm_request.model, llm_request.api_key, schemas) == 0


def provider_tools(registry: ToolRegistry, client_tools: Iterable[ClientTool]) -> tuple[dict[str, Any], ...]:
    """Server tools, then the request's client tools, as OpenAI-style function schemas."""
    server = [_function(spec.name, spec.description, spec.json_schema()) for spec in registry.specs]
    client = [_function(tool.name, tool.description, tool.parameters) for tool in client_tools]
    return tuple(server + client)


def _function(name: str, description: str, parameters: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {"name": name, "description": description, "parameters": parameters},
    }


def parse_native_reply(
    reply: LLMReply,
    tools: Mapping[str, dict[str, Any]],
    aliases: Mapping[str, Aliases] | None = None,
    plain_answer: bool = False,
) -> NativeParse:
    """The reply's action or final answer; FormatError (with raw_output in its text) when it has neither.

    `plain_answer`: content without a call is the final answer (parse_reply)."""
    if not reply.tool_calls:
        return NativeParse(parse_reply(reply.text, tools, aliases, plain_answer), reply.text)
    call = reply.tool_calls[0]
    thought = _thought(reply.text, tools)
    blob = json.dumps({"name": call.name, "arguments": call.arguments.strip() or "{}"}, ensure_ascii=False)
    try:
        parsed = parse_reply(blob, tools, aliases)
    except FormatError as exc:
        raise NativeFormatError(exc.reason, thought, _as_text(thought, f"Action: {blob}")) from None
    action = parsed.action
    assert action is not None  # a blob is an action, never a final answer
    canonical = ParsedAction(action.tool_name, action.tool_args, _action_text(action, blob))
    raw_output = _as_text(thought, canonical.raw_action_string)
    reply_parsed = ParsedReply(thought, canonical, None, parsed.notes)
    return NativeParse(reply_parsed, raw_output, len(reply.tool_calls) - 1)


class NativeFormatError(FormatError):
    """A native tool call that could not be used, and how it reads in the text syntax."""

    def __init__(self, reason: str, thought: str, raw_output: str) -> None:
        super().__init__(reason, thought)
        self.raw_output = raw_output


def _thought(text: str, tools: Mapping[str, dict[str, Any]]) -> str:
    """The reasoning in the content: before any label, without a "Thought:" label."""
    try:
        return parse_reply(text, tools).thought
    except FormatError as exc:
        return exc.thought


def _action_text(action: ParsedAction, blob: str) -> str:
    try:
        return render_action(action.tool_name, action.tool_args)
    except (ValueError, TypeError):  # an argument name that is not a Python identifier
        return f"Action: {blob}"


def _as_text(thought: str, action: str) -> str:
    return f"Thought: {thought}\n{action}" if thought else action
