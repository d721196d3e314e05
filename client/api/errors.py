"""What the client library raises: one tree, each API error carrying the server's error body.

    ReactstepError                       anything the library raises on purpose
    ├── ConnectionFailed                 no answer: refused, reset, timed out, a stream cut short
    ├── BadResponse                      an answer that is not what the contract says
    └── ApiError                         an error body {error: {code, message, request_id}}
        ├── BadRequest       (400, 422)  the request was refused as malformed
        ├── Unauthorized     (401)
        ├── Forbidden        (403)
        ├── NotFound         (404)       project_not_found, file_not_found, version_not_found
        ├── Conflict         (409)       conflict, name_collision
        ├── PreconditionFailed (412)     If-Match / If-None-Match did not hold
        ├── PayloadTooLarge  (413)
        ├── RateLimited      (429)
        ├── ServerError      (5xx)
        │   └── Unavailable  (503)       overloaded, llm_unavailable, storage_unavailable, ...
        └── StreamError                  an `error` event inside a stream that began with 200

httpx's errors are translated here, once (`raise ... from exc`).
"""

import json
from typing import Any

import httpx


class ReactstepError(Exception):
    """Anything the client library raises on purpose."""


ClientError = ReactstepError  # the name the CLI has used since before the library


class ConnectionFailed(ReactstepError):
    """The server could not be reached, or the connection broke before a complete answer."""


class BadResponse(ReactstepError):
    """The server answered with something the contract does not describe."""


class ApiError(ReactstepError):
    """The server answered with an error body: its HTTP status, code, message and request id."""

    def __init__(self, status: int, code: str, message: str, request_id: str | None = None) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.request_id = request_id


class BadRequest(ApiError):
    """400 or 422: the request was refused as malformed."""


class Unauthorized(ApiError):
    """401: no key, or a key the server does not know."""


class Forbidden(ApiError):
    """403: the key may not use this project, or the origin is refused."""


class NotFound(ApiError):
    """404: no such project, file or version."""


class Conflict(ApiError):
    """409: the change conflicts with the project's state."""


class PreconditionFailed(ApiError):
    """412: the file changed since the ETag the request named."""


class PayloadTooLarge(ApiError):
    """413: the body is larger than the server accepts."""


class RateLimited(ApiError):
    """429: too many requests; the library waited and retried as far as it may."""


class ServerError(ApiError):
    """5xx: the server or something behind it failed."""


class Unavailable(ServerError):
    """503: overloaded, or a dependency (LLM, storage, vector store) is unavailable."""


class StreamError(ApiError):
    """An `error` event ended a stream the server had begun with 200."""


_BY_STATUS: dict[int, type[ApiError]] = {
    400: BadRequest,
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    412: PreconditionFailed,
    413: PayloadTooLarge,
    422: BadRequest,
    429: RateLimited,
    503: Unavailable,
}


def api_error(status: int, payload: Any, kind: type[ApiError] | None = None) -> ApiError:
    """The ApiError for an error body (`{error: {code, message, request_id}}`, or whatever else came)."""
    error = payload.get("error", {}) if isinstance(payload, dict) else {}
    error = error if isinstance(error, dict) else {}
    chosen = kind or _BY_STATUS.get(status) or (ServerError if status >= 500 else ApiError)
    request_id = error.get("request_id")
    return chosen(
        status,
        str(error.get("code", "unknown")),
        str(error.get("message", "")),
        None if request_id is None else str(request_id),
    )


def error_of(response: httpx.Response) -> ApiError:
    """The ApiError of an error answer already read; a body that is not JSON becomes its message."""
    try:
        payload = json.loads(response.content)
    except ValueError:
        shown = response.content[:200].decode(errors="replace")
        payload = {"error": {"code": "bad_response", "message": shown}}
    if isinstance(payload, dict) and isinstance(payload.get("error"), dict):
        payload["error"].setdefault("request_id", response.headers.get("x-request-id"))
    return api_error(response.status_code, payload)


def connection_failed(url: httpx.URL, exc: httpx.HTTPError) -> ConnectionFailed:
    """The library's error for httpx's transport failure: never connected, or broken off after."""
    server = f"{url.scheme}://{url.netloc.decode()}"
    if isinstance(exc, httpx.ConnectError):
        return ConnectionFailed(f"cannot reach {server}: {exc}")
    return ConnectionFailed(f"the connection to {server} failed ({type(exc).__name__}): {exc}")
