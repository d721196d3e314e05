"""What the LLM gateway takes and gives: plain data, free of litellm, shared by the step's modules."""

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from pydantic import SecretStr

from reactstep.contract.step_report import KeyBudget, Usage

Message = dict[str, Any]


@dataclass(frozen=True)
class LLMRequest:
    """One chat completion call, fully resolved (model, base, key, limits, tools)."""

    model: str
    messages: list[Message]
    temperature: float
    max_tokens: int
    timeout_s: float
    api_base: str | None = None
    api_key: SecretStr | None = field(default=None, repr=False)
    stop: tuple[str, ...] = ()
    tools: tuple[dict[str, Any], ...] = ()  # provider tool schemas: native tool calling
    tool_choice: Literal["auto", "none"] = "auto"  # "none": the tools stay in the prompt, unusable
    attempt: int = 0  # 0 for a step's first call, n for its n-th retry (retries.Attempts sets it)


@dataclass(frozen=True)
class ModelFacts:
    """What a step needs to know about its model, from litellm's offline tables, resolved once."""

    model: str
    provider: str | None  # the provider the name routes to ('openai/x' -> 'openai'); None if unknown
    native_tools: bool  # takes tool schemas (function calling)
    context_window: int | None  # input tokens it accepts; None when the table does not know


@dataclass(frozen=True)
class NativeToolCall:
    """A tool call the provider returned, its arguments still JSON text."""

    name: str
    arguments: str


@dataclass(frozen=True)
class LLMReply:
    """The model's text and tool calls, and what they cost."""

    text: str
    usage: Usage
    finish_reason: str | None
    elapsed_ms: float
    tool_calls: tuple[NativeToolCall, ...] = ()
    stop_dropped: bool = False  # the provider rejected the stop sequences; sent without them
    budget: KeyBudget | None = None  # what the caller's service key has left (budgets/spending.py)


class LLMGateway(Protocol):
    """Anything that can answer an LLMRequest, whole or as a stream."""

    async def complete(self, request: LLMRequest) -> LLMReply: ...

    def stream(self, request: LLMRequest) -> AsyncIterator[str | LLMReply]:
        """Text deltas as they arrive, then the whole LLMReply as the last item."""
        ...
