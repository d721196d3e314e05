"""The only module that talks HTTP: a Call sent with httpx, retried by the rules of retries.py,
errors translated (errors.py), event streams read with httpx-sse (a background step's resumed when
it breaks off: resumption.py).

The sync and async transports share everything but the send, the sleep and the stream read:
`Attempts` decides after each answer or failure whether to wait and send again, or to raise.
"""

import contextlib
import time
from collections.abc import AsyncGenerator, Generator
from typing import Any

import httpx
from httpx_sse import EventSource, ServerSentEvent, SSEError

from reactstep.client.api.calls import Call, event_of
from reactstep.client.api.errors import BadResponse, connection_failed, error_of
from reactstep.client.api.resumption import Resumption
from reactstep.client.api.retries import RetryPolicy, may_retry_answer, may_retry_failure

USER_AGENT = "reactstep-client"
ABANDON_TIMEOUT_S = 2.0  # a stream left early stops its step, but never holds up the one leaving


def http_options(base_url: str, api_key: str | None, timeout_s: float) -> dict[str, Any]:
    """What both httpx clients are built with: the server, the key, the timeout."""
    headers = {"user-agent": USER_AGENT}
    if api_key:
        headers["authorization"] = f"Bearer {api_key}"
    return {"base_url": base_url.rstrip("/"), "headers": headers, "timeout": timeout_s}


def build(http: httpx.Client | httpx.AsyncClient, call: Call, stream: bool) -> httpx.Request:
    """The httpx request of a call (built once; sent again as is on a retry)."""
    headers = dict(call.headers)
    if stream:
        headers["accept"] = "text/event-stream"
    return http.build_request(
        call.method,
        call.path,
        json=call.json,
        content=call.content,
        headers=headers,
        params=call.params or None,
    )


class Attempts:
    """The retry bookkeeping of one call: after each answer or failure, a wait, or an error raised."""

    def __init__(self, call: Call, policy: RetryPolicy) -> None:
        self.call = call
        self.policy = policy
        self.made = 0

    def after_answer(self, response: httpx.Response) -> float | None:
        """None when the answer is the one to return; else the seconds to wait before sending again.
        The error answer's body must have been read; raises its ApiError when it may not be retried."""
        self.made += 1
        if response.status_code < 400:
            return None
        error = error_of(response)
        retry_after = response.headers.get("retry-after")
        if (
            self.made >= self.policy.attempts
            or not may_retry_answer(self.call.safety, response.status_code, error.code)
            or (response.status_code == 429 and self.policy.waits_too_long(retry_after))
        ):
            raise error
        return self.policy.wait_s(self.made, retry_after)

    def after_failure(self, request: httpx.Request, exc: httpx.HTTPError) -> float:
        """The seconds to wait before sending again after a transport failure; ConnectionFailed if not."""
        self.made += 1
        if self.made >= self.policy.attempts or not may_retry_failure(exc):
            raise connection_failed(request.url, exc) from exc
        return self.policy.wait_s(self.made, None)


class SyncTransport:
    """Calls sent with an httpx.Client (one connection pool)."""

    def __init__(self, http: httpx.Client, policy: RetryPolicy) -> None:
        self.http = http
        self.policy = policy

    def send(self, call: Call) -> httpx.Response:
        """The call's answer, read whole (2xx; errors raised)."""
        return self._open(call, stream=False)

    def events(self, call: Call) -> Generator[tuple[str, dict[str, Any]], None, None]:
        """The call's events, in order, as (name, data); an `error` event raises StreamError. A
        background step's stream that breaks off is resumed (resumption.py)."""
        resumption = Resumption(self.policy.attempts)
        try:
            while True:
                response = self._open(call, stream=True)
                failure: httpx.HTTPError | None = None
                try:
                    for sse in EventSource(response).iter_sse():
                        if resumption.saw(sse.event, sse.data, sse.id):
                            yield _named(sse)
                except SSEError as exc:
                    raise BadResponse(f"the answer is no event stream: {exc}") from exc
                except httpx.HTTPError as exc:
                    failure = exc
                finally:
                    response.close()
                resumed = _resumed(resumption, response, failure)
                if resumed is None:
                    return
                time.sleep(self.policy.wait_s(resumption.resumed, None))
                call = resumed
        except BaseException:  # closed early, interrupted, failed: a step left running is stopped
            self._abandon(resumption)
            raise

    def _abandon(self, resumption: Resumption) -> None:
        """DELETE the background step a stream left before its end, so its model call stops too."""
        if (path := resumption.abandoned_path()) is not None:
            with contextlib.suppress(httpx.HTTPError):  # best effort: the stream's own error is raised
                self.http.delete(path, timeout=ABANDON_TIMEOUT_S)

    def _open(self, call: Call, stream: bool) -> httpx.Response:
        request = build(self.http, call, stream)
        attempts = Attempts(call, self.policy)
        while True:
            try:
                response = self.http.send(request, stream=stream)
            except httpx.HTTPError as exc:
                time.sleep(attempts.after_failure(request, exc))
                continue
            if response.status_code >= 400:
                _read_closed(response)
            wait = attempts.after_answer(response)
            if wait is None:
                return response
            time.sleep(wait)


class AsyncTransport:
    """Calls sent with an httpx.AsyncClient."""

    def __init__(self, http: httpx.AsyncClient, policy: RetryPolicy) -> None:
        self.http = http
        self.policy = policy

    async def send(self, call: Call) -> httpx.Response:
        """The call's answer, read whole (2xx; errors raised)."""
        return await self._open(call, stream=False)

    async def events(self, call: Call) -> AsyncGenerator[tuple[str, dict[str, Any]], None]:
        """The call's events, in order, as (name, data); an `error` event raises StreamError. A
        background step's stream that breaks off is resumed (resumption.py)."""
        import asyncio  # here, not at the top: a program using the sync Client never loads asyncio

        resumption = Resumption(self.policy.attempts)
        try:
            while True:
                response = await self._open(call, stream=True)
                failure: httpx.HTTPError | None = None
                try:
                    async for sse in EventSource(response).aiter_sse():
                        if resumption.saw(sse.event, sse.data, sse.id):
                            yield _named(sse)
                except SSEError as exc:
                    raise BadResponse(f"the answer is no event stream: {exc}") from exc
                except httpx.HTTPError as exc:
                    failure = exc
                finally:
                    await response.aclose()
                resumed = _resumed(resumption, response, failure)
                if resumed is None:
                    return
                await asyncio.sleep(self.policy.wait_s(resumption.resumed, None))
                call = resumed
        except BaseException:  # closed early, interrupted, cancelled, failed: a step left running is stopped
            await self._abandon(resumption)
            raise

    async def _abandon(self, resumption: Resumption) -> None:
        """DELETE the background step a stream left before its end, so its model call stops too."""
        if (path := resumption.abandoned_path()) is not None:
            with contextlib.suppress(httpx.HTTPError):  # best effort: the stream's own error is raised
                await self.http.delete(path, timeout=ABANDON_TIMEOUT_S)

    async def _open(self, call: Call, stream: bool) -> httpx.Response:
        import asyncio  # here, not at the top: a program using the sync Client never loads asyncio

        request = build(self.http, call, stream)
        attempts = Attempts(call, self.policy)
        while True:
            try:
                response = await self.http.send(request, stream=stream)
            except httpx.HTTPError as exc:
                await asyncio.sleep(attempts.after_failure(request, exc))
                continue
            if response.status_code >= 400:
                try:
                    await response.aread()
                finally:
                    await response.aclose()
            wait = attempts.after_answer(response)
            if wait is None:
                return response
            await asyncio.sleep(wait)


def _read_closed(response: httpx.Response) -> None:
    try:
        response.read()
    finally:
        response.close()


def _resumed(
    resumption: Resumption, response: httpx.Response, failure: httpx.HTTPError | None
) -> Call | None:
    """The call that resumes a stream that ended (cleanly or not) before its last event; None when it
    ended whole, or ended cleanly and cannot be resumed; ConnectionFailed when it broke and cannot."""
    resumed = resumption.next_call()
    if resumed is None and failure is not None:
        raise connection_failed(response.request.url, failure) from failure
    return resumed


def _named(sse: ServerSentEvent) -> tuple[str, dict[str, Any]]:
    return event_of(sse.event, sse.data)
