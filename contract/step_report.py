"""What a react_step answer reports about the step beside its outcome: the tokens and their cost, the
time, what the service key has left, and what the LLM was asked."""

from typing import Any

from pydantic import ConfigDict, SerializerFunctionWrapHandler, model_serializer

from reactstep.contract.common import WireModel, nulls_left_out


class Usage(WireModel):
    """Token counts the provider reported (0 when it reported none), or the server's estimate (estimated)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    cached_tokens: int | None = None
    """Prompt tokens the provider served from its prompt cache; null when the provider does not say
    (llama.cpp's servers reuse a prompt's prefix and report none), never a 0 it did not report."""
    estimated: bool = False
    """True when the counts are an estimate, not the provider's: a streamed answer whose provider sent
    no usage chunk is counted by the server (its tokenizer's guess for an unknown model); false when the
    provider reported them."""
    cost_usd: float | None = None
    """What the step's tokens cost in US dollars, at the prices litellm's table gives the model
    (prompt tokens at its input price, cached ones at its cache-read price, completion tokens at
    its output price); absent when the table has no price for the model (a local or unknown one)."""

    @model_serializer(mode="wrap")
    def _unknown_stays_null(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """cached_tokens is written even where a body leaves out what is None: null means unknown."""
        data: dict[str, Any] = handler(self)
        data.setdefault("cached_tokens", self.cached_tokens)
        return data


class KeyBudget(WireModel):
    """What the service key has left after this step, by the limits its REACTSTEP_API_KEYS entry
    sets (see docs/budgets.md); a limit the key does not have is left out."""

    model_config = ConfigDict(json_schema_extra=nulls_left_out)

    tokens_left: int | None = None
    """Tokens the key may still spend today (UTC), steps in flight counted at their most."""
    usd_left: float | None = None
    """US dollars the key may still spend today (UTC), steps in flight counted at their most."""
    requests_left: int | None = None
    """react_step calls the key may still make this minute."""
    resets_at: str
    """When today's counts start again: the next midnight UTC, as RFC 3339."""
    priced: bool
    """Whether litellm knows this step's model's price. false: the step counted against the
    key's tokens only, not its dollars."""


class Timing(WireModel):
    """Where the step's time went, in milliseconds."""

    llm_ms: float = 0.0
    """The LLM call, retries and their waits included."""
    total_ms: float = 0.0
    retries: int = 0
    """LLM attempts retried after a 429, a 5xx or a timeout."""


class LLMRequestSeen(WireModel):
    """What the LLM was asked in this step, as hashes a replay compares (and as text when asked)."""

    model_config = ConfigDict(json_schema_extra=nulls_left_out)

    sha256: str
    """SHA-256 of the canonical JSON of all the parts' texts: the model, the rendered messages, the
    tool manifest, the stop sequences and the sampling settings."""
    parts: dict[str, str]
    """Each part's SHA-256 by name: `model`, `system prompt`, `message 1`, `message 2`... (the
    messages after the system prompt, in order), `manifest` (the tool manifest text, or in native
    mode the tools' JSON Schemas), `sampling` (temperature, max_tokens, stop sequences)."""
    rendered: dict[str, str] | None = None
    """Each part's text, by the same names; present only when the request set
    include_llm_request."""
