"""The reactstep client library: `from reactstep.client import Client, AsyncClient`.

AsyncClient (and asyncio with it) is loaded when first asked for, so a program that uses the sync
Client does not pay for it.
"""

from typing import TYPE_CHECKING, Any

from reactstep.client.agent.loop import REJECTED, ApprovalRequest, RunResult
from reactstep.client.api.errors import (
    ApiError,
    BadRequest,
    BadResponse,
    Conflict,
    ConnectionFailed,
    Forbidden,
    NotFound,
    PayloadTooLarge,
    PreconditionFailed,
    RateLimited,
    ReactstepError,
    ServerError,
    StreamError,
    Unauthorized,
    Unavailable,
)
from reactstep.client.api.operations import NEW_FILE
from reactstep.client.api.retries import NO_RETRIES, RetryPolicy
from reactstep.client.library import Client
from reactstep.client.workspace.pull import PullRefused, PullReport
from reactstep.client.workspace.sync import SyncOptions, SyncRefused, SyncReport

if TYPE_CHECKING:
    from reactstep.client.async_library import AsyncClient

__all__ = [
    "NEW_FILE",
    "NO_RETRIES",
    "REJECTED",
    "ApiError",
    "ApprovalRequest",
    "AsyncClient",
    "BadRequest",
    "BadResponse",
    "Client",
    "Conflict",
    "ConnectionFailed",
    "Forbidden",
    "NotFound",
    "PayloadTooLarge",
    "PreconditionFailed",
    "PullRefused",
    "PullReport",
    "RateLimited",
    "ReactstepError",
    "RetryPolicy",
    "RunResult",
    "ServerError",
    "StreamError",
    "SyncOptions",
    "SyncRefused",
    "SyncReport",
    "Unauthorized",
    "Unavailable",
]


def __getattr__(name: str) -> Any:
    """AsyncClient, imported on first use (PEP 562)."""
    if name == "AsyncClient":
        from reactstep.client.async_library import AsyncClient

        globals()["AsyncClient"] = AsyncClient
        return AsyncClient
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
