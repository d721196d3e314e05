"""The LLM gateway: the only module that imports litellm; its errors become ours in provider_errors.py.

complete(request) -> LLMReply                      one chat completion
stream(request)   -> text deltas ..., LLMReply     the same answer, as it arrives
a provider that rejects the stop sequences is asked again without them (stop_dropped)
model facts (litellm's offline tables): model_facts (provider, native tools, context window, asked
    once per model name), provider_of, count_tokens, cost_usd (its prices), missing_provider_keys
"""

import asyncio
import contextvars
import functools
import json
import os
import re
import time
from collections.abc import AsyncIterator, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from functools import lru_cache
from typing import Any

from pydantic import SecretStr

from reactstep.service.errors import (
    EmptyStream,
    LLMBadResponse,
    LLMUnavailable,
)
from reactstep.service.llm.abortable import abortable_call
from reactstep.service.llm.clients import async_handler, sync_handler, sync_openai_client
from reactstep.service.llm.protocol import LLMReply, LLMRequest, Message, ModelFacts
from reactstep.service.llm.provider_errors import (
    EmbeddingEndpoint,
    translate_embedding_error,
    translate_error,
)
from reactstep.service.llm.replies import delta_text, reply_from
from reactstep.service.llm.server_facts import mark_unstreamed_calls
from reactstep.service.llm.token_counts import TokenCounts

# Without this, litellm fetches a model price map from GitHub when it is imported and again when it
# looks a model up. Set when this module loads, before anything can import litellm.
LOCAL_COST_MAP = "True"
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", LOCAL_COST_MAP)
# litellm 1.106 reads this on each call (it has no per-call switch): see LiteLLMGateway.
OPENAI_ROUTE_FLAG = "EXPERIMENTAL_OPENAI_BASE_LLM_HTTP_HANDLER"
# Model names come from requests: the facts looked up per name are cached, but not without bound.
MODEL_FACTS_CACHED = 1024
_STOP_PARAM = re.compile(r"\bstop\b", re.IGNORECASE)


class LiteLLMGateway:
    """Calls any litellm model; litellm is imported on first use because its import is slow.

    complete() runs litellm's synchronous call on a worker thread of its own pool: litellm's async
    path costs more per call (its own hop to an executor, then the SDK's async transforms) than
    one hop to a thread that makes the plain call. Streams stay async, to end the moment the
    client goes. A cancelled call's socket is shut (abortable.py): its thread ends at once, and the
    model server sees the request closed.

    Making one switches litellm, for the whole process, to its own httpx route for OpenAI-style
    chat completions (OPENAI_ROUTE_FLAG) instead of the OpenAI SDK: the same request and response
    transforms, ~2.5 ms less per call on 2 cores (the SDK re-walks every message against its
    TypedDicts and builds response objects litellm then rebuilds). Answers, usage, tool calls and
    streams come out the same, errors with the same codes and messages (provider_errors.py reads an
    error body down to its message, as the SDK did), except that a 200 whose body is not JSON is
    llm_bad_response (the SDK route called it a 500), and a 422 is sent once and its message kept
    (the SDK route sent it twice and came back with no answer: "the LLM returned no choices").
    See test_http_route.py. The clients the gateway hands litellm fit this route only.
    """

    def __init__(self, max_workers: int = 64) -> None:
        os.environ[OPENAI_ROUTE_FLAG] = "true"
        self._workers = ThreadPoolExecutor(max_workers, thread_name_prefix="llm", initializer=_own_event_loop)

    async def complete(self, request: LLMRequest) -> LLMReply:
        """Send the request; translate every provider failure to an UpstreamError."""
        started = time.perf_counter()
        with abortable_call() as handle:
            call = functools.partial(contextvars.copy_context().run, _open_sync, request)
            try:
                response, stop_dropped = await asyncio.get_running_loop().run_in_executor(self._workers, call)
            except asyncio.CancelledError:  # its client left: the model server sees the request closed now
                handle.abort()
                raise
        return reply_from(response, _since(started), stop_dropped)

    async def stream(self, request: LLMRequest) -> AsyncIterator[str | LLMReply]:
        """Stream the answer; closing this generator closes the upstream connection."""
        started = time.perf_counter()
        response, stop_dropped = await _open(request, stream=True, stream_options={"include_usage": True})
        chunks: list[Any] = []
        try:
            async for chunk in response:
                chunks.append(chunk)
                if text := delta_text(chunk):
                    yield text
        except Exception as exc:
            raise translate_error(exc, request) from exc
        finally:
            await response.aclose()
        # litellm makes up a final "stop" chunk for a stream that just ended; it keeps what it received.
        if not getattr(response, "chunks", chunks):
            # A 200 with no event at all is the server's answer to this call, not a network fault;
            # for a call that may use a tool it is remembered (the step asks such calls whole).
            if request.tools:
                mark_unstreamed_calls(request.api_base, request.model)
            raise EmptyStream(
                "the model server opened the stream and closed it without sending anything: it cannot "
                "stream this call (its log says why); send the step without stream"
            )
        if getattr(response, "received_finish_reason", "") is None:
            raise LLMUnavailable("the LLM stream ended before its last chunk")
        built = _import_litellm().stream_chunk_builder(chunks)
        reply = reply_from(built, _since(started), stop_dropped)
        if not _usage_reported(response):
            reply = replace(reply, usage=reply.usage.model_copy(update={"estimated": True}))
        yield reply


def _usage_reported(stream: Any) -> bool:
    """Whether the provider sent a usage chunk: litellm keeps the chunks it received in `chunks` (a
    provider's usage-only chunk among them), and otherwise puts its own count on the last chunk it yields."""
    return any(getattr(chunk, "usage", None) is not None for chunk in getattr(stream, "chunks", ()))


async def _open(request: LLMRequest, **extra: Any) -> tuple[Any, bool]:
    """The provider's response, and whether the stop sequences had to be dropped to get it."""
    litellm = _import_litellm()
    try:
        return await litellm.acompletion(**_call_arguments(request, _async_handler), **extra), False
    except Exception as exc:
        if not (request.stop and _rejects_stop(exc)):
            raise translate_error(exc, request) from exc
    try:
        arguments = _call_arguments(replace(request, stop=()), _async_handler)
        return await litellm.acompletion(**arguments, **extra), True
    except Exception as exc:
        raise translate_error(exc, request) from exc


def _own_event_loop() -> None:
    """A worker thread's idle event loop, kept for the thread's life: litellm runs each sync call's
    async timing hook on it (~10 us) instead of asyncio.run, a new loop, epoll and socket pair per
    call (~0.35 ms on 2 cores). The hook does the same either way."""
    asyncio.set_event_loop(asyncio.new_event_loop())


def _open_sync(request: LLMRequest) -> tuple[Any, bool]:
    """_open, as one blocking call (for a worker thread), without litellm's success logging.

    That logging feeds litellm's own callbacks and cost tracking, which this service does not use;
    it costs ~0.8 ms of CPU per call on a background thread that holds the GIL while the step
    finishes. litellm skips it for calls it marks internal, so ours are marked so.
    """
    litellm = _import_litellm()
    marked = _internal_call_mark().set(True)
    try:
        return _complete_sync(litellm, request)
    finally:
        _internal_call_mark().reset(marked)


def _complete_sync(litellm: Any, request: LLMRequest) -> tuple[Any, bool]:
    try:
        return litellm.completion(**_call_arguments(request, _sync_handler)), False
    except Exception as exc:
        if not (request.stop and _rejects_stop(exc)):
            raise translate_error(exc, request) from exc
    try:
        return litellm.completion(**_call_arguments(replace(request, stop=()), _sync_handler)), True
    except Exception as exc:
        raise translate_error(exc, request) from exc


def _rejects_stop(exc: Exception) -> bool:
    status = getattr(exc, "status_code", None)
    return status == 400 and bool(_STOP_PARAM.search(str(getattr(exc, "message", exc))))


def _since(started: float) -> float:
    return (time.perf_counter() - started) * 1000


def _internal_call_mark() -> contextvars.ContextVar[bool]:
    # litellm 1.106's own flag (pinned in pyproject.toml); tests/service/llm pin what it skips.
    _import_litellm()  # first: importing any part of litellm imports all of it
    from litellm._internal_context import is_internal_call

    mark: contextvars.ContextVar[bool] = is_internal_call
    return mark


def _import_litellm() -> Any:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", LOCAL_COST_MAP)  # in case it was unset since
    import litellm

    litellm.telemetry = False
    litellm.suppress_debug_info = True
    litellm.drop_params = True
    return litellm


def warm_up() -> None:
    """Load what a first step would otherwise load while it waits: litellm and its tokenizer tables."""
    _import_litellm().token_counter(model="openai/warm-up", messages=[{"role": "user", "content": "warm"}])


def _sync_handler() -> Any:
    """litellm's sync HTTP handler around the process's no-redirect pool."""
    from litellm.llms.custom_httpx.http_handler import HTTPHandler

    return sync_handler(lambda pool: HTTPHandler(client=pool))


def _async_handler() -> Any:
    """litellm's async HTTP handler around this event loop's no-redirect pool."""
    from litellm.llms.custom_httpx.http_handler import AsyncHTTPHandler

    def wrap(pool: Any) -> Any:
        handler = AsyncHTTPHandler()
        handler.client = pool  # litellm then neither replaces nor closes it
        return handler

    return async_handler(wrap)


def _call_arguments(request: LLMRequest, http_handler: Callable[[], Any]) -> dict[str, Any]:
    arguments: dict[str, Any] = {
        "model": request.model,
        "messages": request.messages,
        "temperature": request.temperature,
        "max_tokens": request.max_tokens,
        "timeout": request.timeout_s,
        "num_retries": 0,
        "max_retries": 0,
    }
    if request.api_base:
        arguments["api_base"] = request.api_base
    # Local OpenAI-compatible servers often need no key; litellm still wants one.
    arguments["api_key"] = request.api_key.get_secret_value() if request.api_key else "none"
    if request.api_base and provider_of(request.model) == "openai":
        arguments["client"] = http_handler()
    if request.stop:
        arguments["stop"] = list(request.stop)
    if request.tools:
        arguments["tools"] = list(request.tools)
        # Servers such as llama-cpp-python ignore tools that come without a tool_choice.
        arguments["tool_choice"] = request.tool_choice
        # litellm 1.106 imports its MCP gateway (an optional `mcp` package) for any call with tools.
        arguments["_skip_mcp_handler"] = True
    return arguments


@lru_cache(maxsize=MODEL_FACTS_CACHED)
def model_facts(model: str) -> ModelFacts:
    """Everything a step asks about its model, in one look-up per model name."""
    return ModelFacts(model, provider_of(model), _supports_native_tools(model), _context_window(model))


def _context_window(model: str) -> int | None:
    """Input tokens the model accepts, from litellm's offline table; None when it does not know."""
    try:
        info = _import_litellm().get_model_info(model)
    except Exception:  # litellm raises for any model missing from its table
        return None
    window = info.get("max_input_tokens") or info.get("max_tokens")
    return int(window) if window else None


def _supports_native_tools(model: str) -> bool:
    """Whether litellm's table says the model takes tool schemas (function calling)."""
    try:
        return bool(_import_litellm().supports_function_calling(model=model))
    except Exception:  # an unmapped model: assume text
        return False


@lru_cache(maxsize=MODEL_FACTS_CACHED)
def provider_of(model: str) -> str | None:
    """The litellm provider a model name routes to ('openai/x' and 'gpt-4o' -> 'openai'); None if unknown."""
    try:
        return str(_import_litellm().get_llm_provider(model)[1])
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
        info = _import_litellm().get_model_info(model)
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
        found = _import_litellm().validate_environment(model=model)
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
    return int(_import_litellm().token_counter(model=model, messages=messages, tools=tools))


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
        response = _import_litellm().embedding(**arguments)
        data = sorted(response.data, key=lambda item: item["index"])
        return [[float(value) for value in item["embedding"]] for item in data]
    except (KeyError, TypeError, AttributeError) as exc:
        raise LLMBadResponse(f"{endpoint} returned no vectors") from exc
    except Exception as exc:
        raise translate_embedding_error(exc, api_key, endpoint) from exc
