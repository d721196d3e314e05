"""The reactstep client library: `from reactstep.client import Client, AsyncClient`."""

from reactstep.client.async_client import AsyncClient
from reactstep.client.client import Client
from reactstep.client.errors import (
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
from reactstep.client.loop import REJECTED, ApprovalRequest, RunResult
from reactstep.client.operations import NEW_FILE
from reactstep.client.pull import PullRefused, PullReport
from reactstep.client.retries import NO_RETRIES, RetryPolicy
from reactstep.client.sync import SyncOptions, SyncRefused, SyncReport

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
