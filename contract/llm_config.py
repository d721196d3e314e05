"""The `llm_config` of a react_step request: per-request overrides of the server's LLM defaults."""

from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from reactstep.contract.common import Integer, StrictModel

ToolCallingMode = Literal["text", "native", "auto"]
# react: a reply without a call or "Final Answer:" is a format error; native_text: it is the answer.
ReplyFormat = Literal["react", "native_text"]


class LLMConfig(StrictModel):
    """Per-request overrides of the server's LLM defaults; absent or null keys use them."""

    model: Annotated[str, StringConstraints(min_length=1, max_length=200)] | None = None
    """A litellm model name, e.g. openai/gpt-4o-mini (default REACTSTEP_LLM_MODEL). Its provider
    must be in REACTSTEP_LLM_ALLOWED_PROVIDERS, else 403 `provider_not_allowed`.
    """
    temperature: float | None = Field(None, ge=0, le=2)
    max_tokens: Annotated[Integer, Field(ge=1, le=32_768)] | None = None
    """Cap on the reply's tokens (default 1024). Above
    REACTSTEP_LLM_MAX_TOKENS_CAP: 422 `max_tokens_too_large`. Whatever the provider sends, a
    reply longer than 100,000 characters is cut (status `truncated_output`, noted).
    """
    api_base: Annotated[str, StringConstraints(max_length=500)] | None = None
    """An OpenAI-compatible base URL (the model must then be `openai/<name>`, else 400
    `provider_not_allowed`). Checked before any connection, else 403 `api_base_not_allowed`:
    http(s) only, no userinfo, query or fragment; its scheme, host and port must match an
    entry of REACTSTEP_LLM_API_BASE_ALLOWLIST (`scheme://host:port`, host `*` or
    `*.domain`, port `*`); a host matched only by a wildcard must resolve to public
    addresses (private, loopback, link-local and metadata addresses need an entry naming
    the host). Redirects are never followed, and the server's own key is never sent here.
    """
    tool_calling: ToolCallingMode | None = None
    """`text` (the `Action:` protocol), `native` (the provider's tool calls) or `auto` (native
    when litellm says the model supports function calling). Default
    REACTSTEP_LLM_TOOL_CALLING (`text`).
    """
    tool_results: Literal["messages", "text"] | None = None
    """How a native step sends the earlier steps: `messages` (assistant tool calls and `tool`
    messages) or `text` (Action / Observation turns, for a chat format that drops tool messages).
    Default: `text` when the model server is known to drop them (llama-cpp-python's chatml
    formats, probed once), else `messages`. The answer's `tool_results` says which was used; a
    replay sends it back. Text mode ignores it.
    """
    reply_format: ReplyFormat | None = None
    """How a reply with no call and no `Final Answer:` reads. `react` (the default): a
    `format_error` with the corrective message. `native_text`: for an open model that
    answers in its own format (a tool call in its own tokens, or plain text), such a reply is
    the final answer, its reasoning blocks (`<think>`..) the thought. Calls in the models'
    own formats are read in both.
    """
