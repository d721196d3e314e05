"""HTTP clients for OpenAI-compatible servers that never follow a redirect.

litellm's OpenAI path builds httpx clients that follow redirects, so an allowlisted server could
answer 302 and send the call, key and all, on to any address, metadata services included. For a
call with an api_base the gateway hands litellm one of these instead: a 3xx is an error.

    async   one pooled httpx.AsyncClient per event loop (a pool cannot move between loops; the
            pool of a loop that has closed is dropped, so its connections go with it)
    sync    one pooled httpx.Client per process (embeddings run in worker threads)
The OpenAI SDK wrapper around it is made per call; it only carries base URL, key and timeout.
"""

import asyncio
import threading
from typing import Any

import httpx

_lock = threading.Lock()
_async_pools: dict[asyncio.AbstractEventLoop, httpx.AsyncClient] = {}
_sync_pool: list[httpx.Client] = []


def async_openai_client(api_base: str, api_key: str, timeout_s: float) -> Any:
    """An AsyncOpenAI for one call, on this event loop's no-redirect pool."""
    from openai import AsyncOpenAI

    return AsyncOpenAI(
        base_url=api_base, api_key=api_key, http_client=_async_pool(), max_retries=0, timeout=timeout_s
    )


def sync_openai_client(api_base: str, api_key: str, timeout_s: float) -> Any:
    """An OpenAI for one call, on the process's no-redirect pool."""
    from openai import OpenAI

    return OpenAI(base_url=api_base, api_key=api_key, http_client=_sync(), max_retries=0, timeout=timeout_s)


def _async_pool() -> httpx.AsyncClient:
    loop = asyncio.get_running_loop()
    with _lock:
        for closed in [other for other in _async_pools if other.is_closed()]:
            del _async_pools[closed]
        pool = _async_pools.get(loop)
        if pool is None:
            pool = httpx.AsyncClient(follow_redirects=False)
            _async_pools[loop] = pool
        return pool


def _sync() -> httpx.Client:
    with _lock:
        if not _sync_pool:
            _sync_pool.append(httpx.Client(follow_redirects=False))
        return _sync_pool[0]
