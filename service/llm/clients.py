"""HTTP clients for OpenAI-compatible servers that never follow a redirect.

litellm builds httpx clients that follow redirects, so an allowlisted server could answer 302 and
send the call, key and all, on to any address, metadata services included. For a call with an
api_base the gateway hands litellm one of these pools instead: a 3xx is an error.

    sync    one pooled httpx.Client per process (chat completions and embeddings run in worker threads),
            whose connections a cancelled call can shut from the event loop (abortable.py)
    async   one pooled httpx.AsyncClient per event loop (a pool cannot move between loops; the
            pool of a loop that has closed is dropped, so its connections go with it)
Chat completions take a pool inside litellm's own HTTP handler (its route that skips the OpenAI SDK,
see completions.py), made once per pool by the `wrap` gateway.py passes. Embeddings still go through
the SDK: its wrapper around a pool carries base URL, key and timeout and costs about as much as a
local LLM answer to build, so the last WRAPPERS_KEPT of them are kept, by base URL, SHA-256 of the
key and timeout (each key the process was lent stays in memory no longer than its wrapper).
"""

import asyncio
import hashlib
import threading
from collections.abc import Callable
from typing import Any

import httpx

from reactstep.service.llm.abortable import abortable_transport
from reactstep.tools.recent import Recent

WRAPPERS_KEPT = 64

_lock = threading.Lock()
_async_pools: dict[asyncio.AbstractEventLoop, httpx.AsyncClient] = {}
_sync_pool: list[httpx.Client] = []
_handlers: dict[httpx.Client | httpx.AsyncClient, Any] = {}
_wrappers: Recent[tuple[object, ...], Any] = Recent(WRAPPERS_KEPT)


def sync_handler(wrap: Callable[[httpx.Client], Any]) -> Any:
    """The process's no-redirect pool, wrapped once by `wrap`."""
    return _handler(_sync(), wrap)


def async_handler(wrap: Callable[[httpx.AsyncClient], Any]) -> Any:
    """This event loop's no-redirect pool, wrapped once by `wrap`."""
    return _handler(_async_pool(), wrap)


def sync_openai_client(api_base: str, api_key: str, timeout_s: float) -> Any:
    """An OpenAI on the process's no-redirect pool."""
    from openai import OpenAI

    pool = _sync()
    return _wrappers.get_or_make(
        (pool, api_base, _digest(api_key), timeout_s),
        lambda: OpenAI(
            base_url=api_base, api_key=api_key, http_client=pool, max_retries=0, timeout=timeout_s
        ),
    )


def _handler(pool: httpx.Client | httpx.AsyncClient, wrap: Callable[[Any], Any]) -> Any:
    handler = _handlers.get(pool)
    if handler is None:
        with _lock:
            handler = _handlers.get(pool) or _handlers.setdefault(pool, wrap(pool))
    return handler


def _digest(api_key: str) -> str:
    return hashlib.sha256(api_key.encode()).hexdigest()


def _async_pool() -> httpx.AsyncClient:
    loop = asyncio.get_running_loop()
    with _lock:
        for closed in [other for other in _async_pools if other.is_closed()]:
            _handlers.pop(_async_pools.pop(closed), None)
        pool = _async_pools.get(loop)
        if pool is None:
            pool = _async_pools[loop] = httpx.AsyncClient(follow_redirects=False)
        return pool


def _sync() -> httpx.Client:
    with _lock:
        if not _sync_pool:
            _sync_pool.append(httpx.Client(follow_redirects=False, transport=abortable_transport()))
        return _sync_pool[0]
