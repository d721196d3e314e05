"""Idempotency-Key (the IETF httpapi draft) on every route that changes something: a retry with the
same key gets the first answer again, from any replica, and nothing runs twice.

    a keyed route (app.KEYED: POST, PUT, DELETE but /mcp) with an Idempotency-Key header
      ─► the key: 1 to 255 of A-Z a-z 0-9 - _ . : ~ + / =, bare or as a quoted string, else 400
         invalid_idempotency_key
      ─► scoped to the caller: the SHA-256 of its Authorization header (none: dev mode's one scope)
      ─► fingerprint: SHA-256 of method, path, query, If-Match, If-None-Match and the body
      ─► kept_answers.claim ─► a kept answer: sent again, with Idempotent-Replayed: true
                            └► 422 idempotency_key_reused / 409 idempotency_key_in_flight
                            └► claimed: the request runs, its answer copied as it goes out
                                 status < 500 (not 408, 429), the body sent to its end ─► kept
                                 anything else (5xx, an exception, a client that left) ─► released
    no header, or another route ─► the app, untouched

A streamed react_step is kept whole when it ends with its `result` event and replayed as that same
event stream at once; one that ends in an `error` event is released, so a retry runs the step again.
Runs after admission (the body is in scope[BODY]) and inside ObserveMiddleware (the request's id).
"""

import asyncio
import contextlib
import hashlib
import logging
import re
from collections.abc import Callable

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from reactstep.service.errors import BadRequest, ServiceError, error_response
from reactstep.service.http import kept_answers
from reactstep.service.http.admission import BODY
from reactstep.service.http.kept_answers import Answer, Claimed
from reactstep.service.logs import context as logs
from reactstep.service.worker_threads import on_worker
from reactstep.tools.store.objects import ObjectStore

logger = logging.getLogger("reactstep")

HEADER = b"idempotency-key"
REPLAYED = (b"idempotent-replayed", b"true")
KEY = re.compile(r'(?P<quote>"?)(?P<key>[A-Za-z0-9._:~+/=-]{1,255})(?P=quote)')
NOT_KEPT = frozenset({408, 429})  # refusals of the moment: a retry should run
FINGERPRINTED = (b"if-match", b"if-none-match")
STREAM_RESULT = b"event: result\n"
STREAM_ERROR = b"event: error\n"


class IdempotencyMiddleware:
    """Answers a keyed request once per key: later ones get the kept answer (see the module)."""

    def __init__(
        self,
        app: ASGIApp,
        store: ObjectStore,
        keep_s: float,
        keyed: Callable[[Scope], bool],
        renew_s: float = kept_answers.RENEW_S,
    ) -> None:
        self.app = app
        self.store = store
        self.keep_s = keep_s
        self.keyed = keyed
        self.renew_s = renew_s

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        raw = _header(scope, HEADER) if scope["type"] == "http" else None
        body = scope.get(BODY)
        if raw is None or not isinstance(body, bytes) or not self.keyed(scope):
            await self.app(scope, receive, send)
            return
        try:
            key = parse_key(raw)
            fingerprint = request_fingerprint(scope, body)
            name = kept_answers.record_name(caller_scope(scope), key)
            found = await on_worker(kept_answers.claim, self.store, name, fingerprint)
        except ServiceError as error:
            await error_response(error)(scope, receive, send)
            return
        if isinstance(found, Answer):
            logs.note(idempotency="replayed")
            await _replay(found, send)
            return
        await self._run(found, fingerprint, scope, receive, send)

    async def _run(
        self, claimed: Claimed, fingerprint: str, scope: Scope, receive: Receive, send: Send
    ) -> None:
        copy = _Copy(send)
        renewing = asyncio.create_task(self._renew(claimed, fingerprint))
        try:
            await self.app(scope, receive, copy.send)
        finally:
            renewing.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await renewing
            await self._settle(claimed, fingerprint, copy.answer())

    async def _renew(self, claimed: Claimed, fingerprint: str) -> None:
        """Push the claim's expiry on while the request runs; a store failure waits for the next turn."""
        while True:
            await asyncio.sleep(self.renew_s)
            try:
                if not await on_worker(kept_answers.renew, self.store, claimed, fingerprint):
                    return
            except ServiceError as error:
                logger.warning("an Idempotency-Key claim could not be renewed: %s", error.message)

    async def _settle(self, claimed: Claimed, fingerprint: str, answer: Answer | None) -> None:
        """Keep the answer, or release the key. The answer has gone out: a store failure now is
        logged, and the claim runs out by itself (a retry after that runs again)."""
        try:
            if answer is None:
                await on_worker(kept_answers.release, self.store, claimed)
                return
            await on_worker(kept_answers.keep, self.store, claimed, fingerprint, answer, self.keep_s)
        except ServiceError as error:
            logger.warning("the answer to an Idempotency-Key could not be kept: %s", error.message)


def parse_key(raw: bytes) -> str:
    """The key of an Idempotency-Key header; 400 invalid_idempotency_key when it is none."""
    match = KEY.fullmatch(raw.decode("latin-1").strip())
    if match is None:
        raise BadRequest(
            "Idempotency-Key must be 1 to 255 characters of A-Z a-z 0-9 - _ . : ~ + / =, "
            'bare or in double quotes (e.g. "4b8f0c2e-1d3a-4f5e-9a7b-6c1d2e3f4a5b")',
            code="invalid_idempotency_key",
        )
    return match["key"]


def caller_scope(scope: Scope) -> str:
    """Whose keys these are: the caller's key owner, as AuthMiddleware put it in the request's state
    (auth.key_owner: a digest of the bearer key; one owner for every keyless caller of dev mode)."""
    owner: str = scope["state"]["owner"]
    return owner


def request_fingerprint(scope: Scope, body: bytes) -> str:
    """What makes two requests the same: method, path, query, the preconditions and the body."""
    digest = hashlib.sha256()
    for part in (
        scope["method"].encode(),
        scope.get("raw_path") or scope["path"].encode(),
        scope["query_string"],
    ):
        digest.update(len(part).to_bytes(8, "big") + part)
    for name in FINGERPRINTED:
        value = _header(scope, name) or b""
        digest.update(len(value).to_bytes(8, "big") + value)
    digest.update(hashlib.sha256(body).digest())
    return digest.hexdigest()


class _Copy:
    """Sends the app's messages on, keeping a copy of the answer."""

    def __init__(self, send: Send) -> None:
        self._send = send
        self.status = 0
        self.headers: list[tuple[bytes, bytes]] = []
        self.chunks: list[bytes] = []
        self.finished = False

    async def send(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            self.status = int(message["status"])
            self.headers = [(bytes(name), bytes(value)) for name, value in message.get("headers", [])]
        elif message["type"] == "http.response.body":
            self.chunks.append(bytes(message.get("body", b"")))
            self.finished = not message.get("more_body", False)
        await self._send(message)

    def answer(self) -> Answer | None:
        """The answer to keep, or None when there is none worth repeating."""
        if not self.finished or self.status >= 500 or self.status in NOT_KEPT:
            return None
        body = b"".join(self.chunks)
        if _is_stream(self.headers) and not _ends_in_result(body):
            return None
        return Answer(self.status, self.headers, body)


def _is_stream(headers: list[tuple[bytes, bytes]]) -> bool:
    return any(name == b"content-type" and value.startswith(b"text/event-stream") for name, value in headers)


def _ends_in_result(body: bytes) -> bool:
    """Whether a step's event stream ended with its result (an error event, or none, is not kept)."""
    last = body.rstrip(b"\n").rsplit(b"\n\n", 1)[-1] + b"\n"
    return last.startswith(STREAM_RESULT) and STREAM_ERROR not in last


async def _replay(answer: Answer, send: Send) -> None:
    headers = [*answer.headers, REPLAYED]
    await send({"type": "http.response.start", "status": answer.status, "headers": headers})
    await send({"type": "http.response.body", "body": answer.body})


def _header(scope: Scope, name: bytes) -> bytes | None:
    for header, value in scope["headers"]:
        if header == name:
            return bytes(value)
    return None
