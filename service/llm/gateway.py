"""The LLM gateway: the only module that imports litellm; its errors become ours in provider_errors.py.

litellm itself: import_litellm (imported on first use, its process-wide switches set), the HTTP
    handlers it is given, and warm_up
chat completions: completions.py's LiteLLMGateway, over import_litellm
model facts (litellm's offline tables): model_facts (provider, native tools, context window, asked
    once per model name), provider_of, count_tokens, cost_usd (its prices), missing_provider_keys
embeddings: embed_texts
"""

import contextvars
import json
import os
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from pydantic import SecretStr

from reactstep.service.errors import LLMBadResponse
from reactstep.service.llm.clients import async_handler, sync_handler, sync_openai_client
from reactstep.service.llm.protocol import Message, ModelFacts
from reactstep.service.llm.provider_errors import EmbeddingEndpoint, translate_embedding_error
from reactstep.service.llm.token_counts import TokenCounts

# Without this, litellm fetches a model price map from GitHub when it is imported and again when it
# looks a model up. Set when this module loads, before anything can import litellm.
LOCAL_COST_MAP = "True"
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", LOCAL_COST_MAP)
# litellm 1.106 reads this on each call (it has no per-call switch): see completions.LiteLLMGateway.
OPENAI_ROUTE_FLAG = "EXPERIMENTAL_OPENAI_BASE_LLM_HTTP_HANDLER"
# Model names come from requests: the facts looked up per name are cached, but not without bound.
MODEL_FACTS_CACHED = 1024


def internal_call_mark() -> contextvars.ContextVar[bool]:
    """litellm's mark of a call as its own internal one (completions.py sets it; see _open_sync there)."""
    # litellm 1.106's own flag (pinned in pyproject.toml); tests/service/llm pin what it skips.
    import_litellm()  # first: importing any part of litellm imports all of it
    from litellm._internal_context import is_internal_call

    mark: contextvars.ContextVar[bool] = is_internal_call
    return mark


def import_litellm() -> Any:
    """litellm, imported on first use (its import is slow), with its telemetry and debug output off."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", LOCAL_COST_MAP)  # in case it was unset since
    import litellm

    litellm.telemetry = False
    litellm.suppress_debug_info = True
    litellm.drop_params = True
    return litellm


def warm_up() -> None:
    """Load what a first step would otherwise load while it waits: litellm and its tokenizer tables."""
    import_litellm().token_counter(model="openai/warm-up", messages=[{"role": "user", "content": "warm"}])


def litellm_sync_handler() -> Any:
    """litellm's sync HTTP handler around the process's no-redirect pool."""
    from litellm.llms.custom_httpx.http_handler import HTTPHandler

    return sync_handler(lambda pool: HTTPHandler(client=pool))


def litellm_async_handler() -> Any:
    """litellm's async HTTP handler around this event loop's no-redirect pool."""
    from litellm.llms.custom_httpx.http_handler import AsyncHTTPHandler

    def wrap(pool: Any) -> Any:
        handler = AsyncHTTPHandler()
        handler.client = pool  # litellm then neither replaces nor closes it
        return handler

    return async_handler(wrap)


@lru_cache(maxsize=MODEL_FACTS_CACHED)
def model_facts(model: str) -> ModelFacts:
    """Everything a step asks about its model, in one look-up per model name."""
    return ModelFacts(model, provider_of(model), _supports_native_tools(model), _context_window(model))


def _context_window(model: str) -> int | None:
    """Input tokens the model accepts, from litellm's offline table; None when it does not know."""
    try:
        info = import_litellm().get_model_info(model)
    except Exception:  # litellm raises for any model missing from its table
        return None
    window = info.get("max_input_tokens") or info.get("max_tokens")
    return int(window) if window else None


def _supports_native_tools(model: str) -> bool:
    """Whether litellm's table says the model takes tool schemas (function calling)."""
    try:
        return bool(import_litellm().supports_function_calling(model=model))
    except Exception:  # an unmapped model: assume text
        return False


@lru_cache(maxsize=MODEL_FACTS_CACHED)
def provider_of(model: str) -> str | None:
    """The litellm provider a model name routes to ('openai/x' and 'gpt-4o' -> 'openai'); None if unknown."""
    try:
        return str(import_litellm().get_llm_provider(model)[1])
    except Exception:  # litellm raises for a name it cannot route
        return None


def cost_usd(model: str, prompt_tokens: int, completion_tokens: int, cached_tokens: int = 0) -> float | None:
    """What these tokens cost in US dollars at litellm's prices for the model (cached prompt tokens at
    its cache-read price, when it has one); None when its table has no price for the model."""
    prices = token_prices(model)
    if prices is None:
        return None
    prompt, cached, completion = prices
    cached_tokens = min(cached_tokens, prompt_tokens)
    return (prompt_tokens - cached_tokens) * prompt + cached_tokens * cached + completion_tokens * completion


@lru_cache(maxsize=MODEL_FACTS_CACHED)
def token_prices(model: str) -> tuple[float, float, float] | None:
    """The model's price in USD of one prompt token, one cached prompt token and one completion token,
    from litellm's offline table; None when it has no price for the model."""
    try:
        info = import_litellm().get_model_info(model)
    except Exception:  # litellm raises for any model missing from its table
        return None
    prompt, completion = info.get("input_cost_per_token"), info.get("output_cost_per_token")
    if prompt is None or completion is None:
        return None
    cached = info.get("cache_read_input_token_cost")
    return float(prompt), float(prompt if cached is None else cached), float(completion)


def missing_provider_keys(model: str) -> list[str]:
    """The environment variables litellm would read the model's key from, when none of them is set."""
    try:
        found = import_litellm().validate_environment(model=model)
    except Exception:  # a name litellm cannot route: it needs an api_base, not an environment key
        return []
    return [] if found.get("keys_in_environment") else [str(name) for name in found.get("missing_keys", [])]


def count_tokens(model: str, messages: Sequence[Message], tools: Sequence[dict[str, Any]] = ()) -> int:
    """Prompt tokens for the model, by litellm's tokenizer for it (tiktoken when it has none);
    each distinct message is counted once per process (token_counts.py)."""
    try:
        return _TOKEN_COUNTS.count(model, messages, tools)
    except Exception:  # a tokenizer that fails must not fail the step: bytes bound tokens from above
        return len(json.dumps([list(messages), list(tools)], ensure_ascii=False).encode())


def _litellm_count(model: str, messages: list[Message], tools: list[dict[str, Any]] | None) -> int:
    return int(import_litellm().token_counter(model=model, messages=messages, tools=tools))


_TOKEN_COUNTS = TokenCounts(_litellm_count)


def embed_texts(
    endpoint: EmbeddingEndpoint, texts: list[str], api_key: SecretStr | None
) -> list[list[float]]:
    """Embedding vectors from a litellm embedding model, one per text, in order."""
    api_base, timeout_s = endpoint.api_base, endpoint.timeout_s
    arguments: dict[str, Any] = {
        "model": endpoint.model,
        "input": texts,
        "timeout": timeout_s,
        "api_base": api_base,
        "num_retries": 0,  # litellm's own retry loop stays off; its OpenAI client still retries twice
    }
    arguments["api_key"] = api_key.get_secret_value() if api_key else "none"
    if api_base and provider_of(endpoint.model) == "openai":
        arguments["client"] = sync_openai_client(api_base, arguments["api_key"], timeout_s)
    try:
        response = import_litellm().embedding(**arguments)
        data = sorted(response.data, key=lambda item: item["index"])
        return [[float(value) for value in item["embedding"]] for item in data]
    except (KeyError, TypeError, AttributeError) as exc:
        raise LLMBadResponse(f"{endpoint} returned no vectors") from exc
    except Exception as exc:
        raise translate_embedding_error(exc, api_key, endpoint) from exc
