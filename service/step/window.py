"""The context window a step fits its prompt to, who said so, and what counts its tokens.

litellm's table knows the model          its window; litellm's tokenizer for it
REACTSTEP_LLM_DEFAULT_CONTEXT_WINDOW set  that window (a configured window wins over the server's)
the model server says (server_facts.py)   its window; its own tokenizer when it offers one
none of these                             REACTSTEP_LLM_DEFAULT_CONTEXT_WINDOW's default, 8,192
"""

from collections.abc import Callable
from dataclasses import dataclass

from reactstep.service.llm.protocol import LLMRequest, ModelFacts
from reactstep.service.llm.server_facts import UNKNOWN, ServerFacts, server_facts, tool_tokens
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
    facts: ModelFacts, server: ServerFacts, llm_request: LLMRequest, settings: Settings
) -> ModelWindow:
    """The window for this call: litellm's, a configured one, the model server's, or the default."""
    if facts.context_window:
        return ModelWindow(facts.context_window, None)
    configured = WINDOW_FIELD in settings.model_fields_set
    tools = None
    if server is not UNKNOWN and llm_request.tools and llm_request.api_base:
        tools = tool_tokens(llm_request.api_base, llm_request.model, llm_request.api_key, llm_request.tools)
    if server.window and not configured:
        return ModelWindow(server.window, WINDOW_SETTING, server.source, server.count, tools)
    return ModelWindow(
        settings.llm_default_context_window, WINDOW_SETTING, count=server.count, tools_tokens=tools
    )
