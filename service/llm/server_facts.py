"""What an OpenAI-compatible model server says of itself: its context window, and a tokenizer to count
with. Asked once per api_base and model (GETs first; a POST only to a server a GET recognised), when
litellm's table does not know the model:

    llama.cpp's llama-server    GET  {root}/props          default_generation_settings.n_ctx
                                POST {root}/tokenize       {"content": text} -> tokens
    vLLM                        GET  {api_base}/models     the model's max_model_len
                                POST {root}/tokenize       {"model", "prompt": text} -> count
    llama-cpp-python's server   GET  {api_base}/models     entries owned_by "me"
                                POST {api_base}/chat/completions   a 140,000-token prompt: it refuses it
                                                           naming its n_ctx (else its default, 2,048)
                                POST {root}/extras/tokenize/count  {"input": text} -> count
                                POST {api_base}/chat/completions   twice, one token each: does its chat
                                                           format drop tool results (chatml does)?
    Ollama                      GET  {api_base}/models     entries owned_by "library"
                                POST {root}/api/show       num_ctx in its parameters, else Ollama's 4,096
Only llama-cpp-python's server is run in this project's tests (tests/llm_server/); the others follow
their documentation. A server that answers none of these is asked again after RETRY_AFTER_S.
"""

import hashlib
import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx
from pydantic import SecretStr

PROBE_TIMEOUT_S = 2.0
TOOLS_PROBE_TIMEOUT_S = 300.0  # the tool schemas' prefill: ~3,000 tokens on a CPU model
RETRY_AFTER_S = 60.0  # a server not up yet (or not answering) is asked again after this long
LLAMA_CPP_PYTHON_N_CTX = 2048  # llama_cpp.server's --n_ctx default
OLLAMA_NUM_CTX = 4096  # Ollama's default num_ctx since 0.6
# Probes ask as a step does, with a system message: chatml-function-calling renders the tools into it.
QUESTION: list[dict[str, Any]] = [
    {"role": "system", "content": "You help."},
    {"role": "user", "content": "hi"},
]


@dataclass(frozen=True)
class ServerFacts:
    """What the server said of the model; None where it said nothing."""

    window: int | None = None
    source: str = ""
    """Where the window comes from, for the step's note."""
    count: Callable[[str], int] | None = None
    """The server's own tokenizer: tokens of a text."""
    drops_tool_results: bool = False
    """Its chat format leaves `role: tool` messages (and assistant tool calls) out of the prompt, as
    llama-cpp-python's chatml and chatml-function-calling do: the model never sees its observations."""


UNKNOWN = ServerFacts()
_cache: dict[tuple[str, str], tuple[float, ServerFacts]] = {}
_lock = threading.Lock()


def server_facts(api_base: str, model: str, key: SecretStr | None) -> ServerFacts:
    """What the server at api_base says of `model` (its name without the provider prefix), cached."""
    cache_key = (api_base.rstrip("/"), _served_name(model))
    with _lock:
        known = _cache.get(cache_key)
    if known is not None and (known[1] is not UNKNOWN or time.monotonic() - known[0] < RETRY_AFTER_S):
        return known[1]
    facts = _ask(*cache_key, key)
    with _lock:
        _cache[cache_key] = (time.monotonic(), facts)
    return facts


def _ask(api_base: str, name: str, key: SecretStr | None) -> ServerFacts:
    root = _root(api_base)
    with _client(key) as http:
        props = _json(http, "GET", f"{root}/props")
        n_ctx = _int((props.get("default_generation_settings") or {}).get("n_ctx")) or _int(
            props.get("n_ctx")
        )
        if n_ctx:
            return ServerFacts(
                n_ctx, "llama.cpp's /props", _counter(http, f"{root}/tokenize", "content", "tokens")
            )
        entries = _json(http, "GET", f"{api_base}/models").get("data") or []
        entry = next((item for item in entries if isinstance(item, dict) and item.get("id") == name), None)
        entry = entry or (entries[0] if len(entries) == 1 and isinstance(entries[0], dict) else {})
        if max_len := _int(entry.get("max_model_len")):
            return ServerFacts(
                max_len, "vLLM's /v1/models", _counter(http, f"{root}/tokenize", "prompt", "count", name)
            )
        if entry.get("owned_by") == "me":
            counter = _counter(http, f"{root}/extras/tokenize/count", "input", "count")
            window, source = _refused_window(http, api_base, name), "llama-cpp-python's n_ctx, as it said"
            if window is None:
                window, source = LLAMA_CPP_PYTHON_N_CTX, "llama-cpp-python's default n_ctx: it said none"
            drops = _drops_tool_results(http, api_base, name)
            return ServerFacts(window, source, counter, drops)
        if entry.get("owned_by") == "library":
            shown = _json(http, "POST", f"{root}/api/show", {"model": name})
            return ServerFacts(_ollama_num_ctx(shown), "Ollama's num_ctx")
    return UNKNOWN


_tools_cache: dict[tuple[str, str, str], int | None] = {}
_unstreamed_calls: set[tuple[str, str]] = set()


def streams_tool_calls(api_base: str | None, model: str) -> bool:
    """Whether a streamed reply that may call a tool is known to work with this server: False once one
    came back empty (llama-cpp-python's chatml-function-calling streams a message, but answers a stream
    in which the model calls a tool with no chunk at all, "Automatic streaming tool choice is not
    supported" in its own log only)."""
    return api_base is None or (api_base.rstrip("/"), _served_name(model)) not in _unstreamed_calls


def mark_unstreamed_calls(api_base: str | None, model: str) -> None:
    """Remember that this server sent an empty stream for a reply that may call a tool."""
    if api_base is not None:
        with _lock:
            _unstreamed_calls.add((api_base.rstrip("/"), _served_name(model)))


def tool_tokens(
    api_base: str, model: str, key: SecretStr | None, tools: tuple[dict[str, Any], ...]
) -> int | None:
    """The tokens these tool schemas add to a prompt as the server's chat format renders them (0 for a
    format that leaves them out): two one-token completions, with and without them, compared. Measured
    once per server, model and tool set; None when the server did not say."""
    schemas = json.dumps(tools, sort_keys=True)
    api_base, name = api_base.rstrip("/"), _served_name(model)
    cache_key = (api_base, name, hashlib.sha256(schemas.encode()).hexdigest())
    with _lock:
        if cache_key in _tools_cache:
            return _tools_cache[cache_key]
    offered = {"tools": list(tools), "tool_choice": "auto"}
    with _client(key) as http:
        without = _prompt_tokens(http, api_base, name, QUESTION, {}, TOOLS_PROBE_TIMEOUT_S)
        with_tools = _prompt_tokens(http, api_base, name, QUESTION, offered, TOOLS_PROBE_TIMEOUT_S)
    measured = None if without is None or with_tools is None else max(with_tools - without, 0)
    with _lock:
        _tools_cache[cache_key] = measured
    return measured


def _counter(
    http: httpx.Client, url: str, field: str, answer: str, model: str | None = None
) -> Callable[[str], int] | None:
    """The server's tokenizer at url as a function, when it answers a first call; else None."""
    extra = {"model": model} if model else {}
    headers = dict(http.headers)

    def count(text: str) -> int:
        reply = httpx.post(url, json={field: text, **extra}, headers=headers, timeout=30.0)
        reply.raise_for_status()
        value = reply.json()[answer]
        return len(value) if isinstance(value, list) else int(value)

    try:
        count("a")
    except (httpx.HTTPError, ValueError, KeyError, TypeError):
        return None
    return count


PROBE_TOOL = {"type": "function", "function": {"name": "read", "parameters": {"type": "object"}}}
# A tool result the probe sends: if the prompt does not grow by about its tokens, the template dropped it.
PROBE_RESULT = " ".join(f"line {number} of the file reads value {number}" for number in range(12))


def _drops_tool_results(http: httpx.Client, api_base: str, name: str) -> bool:
    """Whether the server's chat format leaves tool results out: two one-token completions, with and
    without a tool call and its result, compared by the prompt tokens the server reports."""
    call = {"id": "call_0", "type": "function", "function": {"name": "read", "arguments": "{}"}}
    with_result = [
        *QUESTION,
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_0", "content": PROBE_RESULT},
    ]
    # As a native step asks: with a tool offered (chatml-function-calling renders every role without one)
    offered = {"tools": [PROBE_TOOL], "tool_choice": "auto"}
    without = _prompt_tokens(http, api_base, name, QUESTION, offered, 60.0)
    with_it = _prompt_tokens(http, api_base, name, with_result, offered, 60.0)
    return without is not None and with_it is not None and with_it - without < len(PROBE_RESULT.split())


# Words in a prompt longer than any window a CPU server is started with: llama-cpp-python refuses it
# after tokenizing it (~0.1 s), before evaluating anything, naming its n_ctx.
OVERLONG_WORDS = 140_000
_WINDOW_REFUSAL = re.compile(r"maximum context length is (\d+) tokens")


def _refused_window(http: httpx.Client, api_base: str, name: str) -> int | None:
    """The n_ctx llama-cpp-python names when it refuses a prompt longer than it (it reports it nowhere
    else); None when it does not answer so."""
    overlong = "hi " * OVERLONG_WORDS  # built when asked, not held by the module
    body = {"model": name, "messages": [{"role": "user", "content": overlong}], "max_tokens": 1}
    try:
        reply = http.post(f"{api_base}/chat/completions", json=body, timeout=PROBE_TIMEOUT_S)
    except httpx.HTTPError:
        return None
    found = _WINDOW_REFUSAL.search(reply.text) if reply.status_code == 400 else None
    return int(found[1]) if found else None


def _prompt_tokens(
    http: httpx.Client,
    api_base: str,
    name: str,
    messages: list[dict[str, Any]],
    extra: dict[str, Any],
    timeout_s: float,
) -> int | None:
    """The prompt tokens the server reports for a one-token completion of these messages."""
    body = {"model": name, "messages": messages, "max_tokens": 1, "temperature": 0, **extra}
    answer = _json(http, "POST", f"{api_base}/chat/completions", body, timeout_s)
    return _int((answer.get("usage") or {}).get("prompt_tokens"))


def _served_name(model: str) -> str:
    """The model's name on its server: a litellm name without its openai/ prefix."""
    return model.split("/", 1)[1] if model.startswith("openai/") else model


def _client(key: SecretStr | None) -> httpx.Client:
    """A client for the probes: the call's key, no redirect followed."""
    headers = {"authorization": f"Bearer {key.get_secret_value()}"} if key else {}
    return httpx.Client(timeout=PROBE_TIMEOUT_S, follow_redirects=False, headers=headers)


def _ollama_num_ctx(shown: dict[str, Any]) -> int:
    for line in str(shown.get("parameters") or "").splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == "num_ctx" and parts[1].isdigit() and int(parts[1]) > 0:
            return int(parts[1])
    return OLLAMA_NUM_CTX


def _json(
    http: httpx.Client, method: str, url: str, body: Any = None, timeout_s: float = PROBE_TIMEOUT_S
) -> dict[str, Any]:
    """The JSON object a 200 answers, or {} for anything else (no server, another kind of server)."""
    try:
        reply = http.request(method, url, json=body, timeout=timeout_s)
        data = reply.json() if reply.status_code == 200 else {}
    except (httpx.HTTPError, json.JSONDecodeError, UnicodeDecodeError):
        return {}
    return data if isinstance(data, dict) else {}


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _root(api_base: str) -> str:
    """The server's root: the api_base without its trailing /v1."""
    parts = urlsplit(api_base)
    path = parts.path.rstrip("/")
    path = path[: -len("/v1")] if path.endswith("/v1") else path
    return urlunsplit((parts.scheme, parts.netloc, path, "", ""))
