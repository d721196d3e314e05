"""The context window a step fits its prompt to, who said so, and what counts its tokens.

litellm's table knows the model          its window; litellm's tokenizer for it
REACTSTEP_LLM_DEFAULT_CONTEXT_WINDOW set  that window (a configured window wins over the server's)
the model server says (server_facts.py)   its window; its own tokenizer when it offers one
none of these                             REACTSTEP_LLM_DEFAULT_CONTEXT_WINDOW's default, 8,192

TokenMeter counts a prompt: the model server's tokenizer when it offers one, else litellm's; a model
litellm does not know is counted with tiktoken's tokenizer, another model's: its count gets
UNKNOWN_MODEL_MARGIN more (SmolLM2's real prompt was 13% over tiktoken's count, 3,463 against 3,072)
"""

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import httpx

from reactstep.service.llm.gateway import count_tokens, model_facts
from reactstep.service.llm.protocol import LLMRequest, Message, ModelFacts
from reactstep.service.llm.server_facts import UNKNOWN, ServerFacts, server_facts
from reactstep.service.settings import Settings

WINDOW_SETTING = "REACTSTEP_LLM_DEFAULT_CONTEXT_WINDOW"
WINDOW_FIELD = "llm_default_context_window"


@dataclass(frozen=True)
class ModelWindow:
    """The window's size in tokens and where it comes from."""

    tokens: int
    setting: str | None
    """The setting that gives it, to name when a prompt does not fit (None: litellm's table)."""
    source: str = ""
    """The model server that reported it, for the step's notes ('' when the server said nothing)."""
    count: Callable[[str], int] | None = None
    """The model server's own tokenizer, when it offers one."""
    tools_tokens: int | None = None
    """What the call's tool schemas add to the prompt, as the model server measured them."""


def asked_server(facts: ModelFacts, llm_request: LLMRequest) -> ServerFacts:
    """What the model server says of the model, when litellm's table does not know it."""
    if facts.context_window or not llm_request.api_base:
        return UNKNOWN
    return server_facts(llm_request.api_base, llm_request.model, llm_request.api_key)


def model_window(
    facts: ModelFacts, server: ServerFacts, settings: Settings, tools: int | None
) -> ModelWindow:
    """The window for this call: litellm's, a configured one, the model server's, or the default;
    `tools`: what the call's tool schemas add to the prompt, as the model server measured them."""
    if facts.context_window:
        return ModelWindow(facts.context_window, None)
    configured = WINDOW_FIELD in settings.model_fields_set
    if server.window and not configured:
        return ModelWindow(server.window, WINDOW_SETTING, server.source, server.count, tools)
    return ModelWindow(
        settings.llm_default_context_window, WINDOW_SETTING, count=server.count, tools_tokens=tools
    )


# Open models' tokenizers make more tokens of the same text than tiktoken's (code and markup most):
# a quarter more keeps such a prompt inside its window, at the cost of eliding a little early.
UNKNOWN_MODEL_MARGIN = 1.25


# Counting with the model server's tokenizer, message by message: the chat template's own tokens around
# each message (ChatML's markers are 4-5; 12 covered a native step's real prompt on SmolLM2), counted on
# the high side. The tool schemas count as the server measured them (server_facts.tool_tokens), else as
# their JSON: SmolLM2's tokenizer makes 3,381 tokens of it where chatml-function-calling adds 3,128.
PER_MESSAGE_TOKENS = 12


@dataclass(frozen=True)
class TokenMeter:
    """Measures prompts for one model and tool set, with the model server's tokenizer when it has one."""

    model: str
    tools: tuple[dict[str, Any], ...] = ()
    server_count: Callable[[str], int] | None = None
    tools_tokens: int | None = None  # the tool schemas as the server renders them, when it measured them

    def upper_bound(self, messages: Sequence[Message]) -> int:
        """No tokenizer makes more tokens than the UTF-8 bytes of the JSON it is sent as."""
        return len(json.dumps([list(messages), list(self.tools)], ensure_ascii=False).encode())

    def count(self, messages: Sequence[Message]) -> int:
        """The prompt's tokens, by the model server's tokenizer when it offers one, else by litellm's;
        UNKNOWN_MODEL_MARGIN more for a model litellm does not know (no context window in its table),
        whose tokens it counts with tiktoken's."""
        if self.server_count is not None:
            try:
                return self._counted_by_server(self.server_count, messages)
            except (httpx.HTTPError, ValueError, KeyError):  # the server's tokenizer went away:
                pass  # count as for any model litellm does not know
        tokens = count_tokens(self.model, messages, self.tools)
        if model_facts(self.model).context_window is None:
            return math.ceil(tokens * UNKNOWN_MODEL_MARGIN)
        return tokens

    def _counted_by_server(self, count: Callable[[str], int], messages: Sequence[Message]) -> int:
        text = "\n".join(_message_text(message) for message in messages)
        tools = self.tools_tokens
        if tools is None:
            tools = count(json.dumps(list(self.tools))) if self.tools else 0
        return count(text) + PER_MESSAGE_TOKENS * len(messages) + tools


def _message_text(message: Message) -> str:
    """What of a message the template renders: its role, content and tool calls."""
    calls = message.get("tool_calls")
    return f"{message.get('role', '')}\n{message.get('content') or ''}" + (json.dumps(calls) if calls else "")
