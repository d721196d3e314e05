"""The claim and the kept answer behind Idempotency-Key, on the local tree and on S3 (moto on
loopback): one claim wins a race, a claim past its expiry is taken over, and a lost claim keeps
nothing over its new holder's."""

import asyncio
import json
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from starlette.types import Message, Receive, Scope, Send

from reactstep.service.backends import open_store, s3_client
from reactstep.service.errors import IdempotencyKeyInFlight, ServiceError, ValidationFailed
from reactstep.service.http import kept_answers
from reactstep.service.http.admission import BODY
from reactstep.service.http.idempotency import IdempotencyMiddleware, caller_scope
from reactstep.service.http.kept_answers import Answer, Claimed
from reactstep.service.settings import Settings
from reactstep.tools.store.local import LocalStore
from reactstep.tools.store.objects import ObjectStore
from tests.tools.store.test_conditional_write import s3_settings

NAME = kept_answers.record_name("scope", "key-1")
ANSWER = Answer(201, [(b"content-type", b"application/json"), (b"etag", b'"e1"')], b'{"made":true}')


@pytest.fixture(params=["local", "s3"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> ObjectStore:
    if request.param == "local":
        return open_store(Settings(storage_backend="local", data_dir=tmp_path))
    endpoint = request.getfixturevalue("s3_server")
    bucket = f"k-{uuid.uuid4().hex[:24]}"
    s3_client(s3_settings(endpoint, "unused")).create_bucket(Bucket=bucket)
    return open_store(s3_settings(endpoint, bucket))


def claimed(store: ObjectStore, fingerprint: str = "f1") -> Claimed:
    found = kept_answers.claim(store, NAME, fingerprint)
    assert isinstance(found, Claimed)
    return found


def test_a_claim_then_its_kept_answer(store: ObjectStore) -> None:
    claim = claimed(store)
    with pytest.raises(IdempotencyKeyInFlight) as busy:
        kept_answers.claim(store, NAME, "f1")
    assert (busy.value.status, busy.value.headers()) == (409, {"retry-after": "1"})
    size = kept_answers.keep(store, claim, "f1", ANSWER, keep_s=60)
    stored = store.get_record(NAME)
    assert stored is not None and size == len(stored[0])
    assert kept_answers.claim(store, NAME, "f1") == ANSWER
    with pytest.raises(ValidationFailed) as reused:
        kept_answers.claim(store, NAME, "f2")
    assert (reused.value.status, reused.value.code) == (422, "idempotency_key_reused")


def test_a_released_key_runs_again(store: ObjectStore) -> None:
    kept_answers.release(store, claimed(store))
    assert isinstance(kept_answers.claim(store, NAME, "f2"), Claimed)  # another body is fine now


@pytest.mark.parametrize("state", ["running", "done"])
def test_a_record_past_its_expiry_is_taken_over(store: ObjectStore, state: str) -> None:
    old = {
        "state": state,
        "fingerprint": "f0",
        "expires": time.time() - 1,
        "status": 200,
        "headers": [],
        "body": "",
    }
    store.put_record_if(NAME, json.dumps(old).encode(), None)
    claim = claimed(store, "f1")
    assert json.loads(store.get_record(NAME)[0])["state"] == "running"  # type: ignore[index]
    assert kept_answers.renew(store, claim, "f1")


@pytest.mark.parametrize(
    "torn", [b"", b"{", b"[]", b'{"state": "other", "fingerprint": "f", "expires": 9e99}']
)
def test_a_torn_record_holds_nothing(store: ObjectStore, torn: bytes) -> None:
    store.put_record_if(NAME, torn, None)
    assert isinstance(kept_answers.claim(store, NAME, "f1"), Claimed)


def test_a_claim_taken_over_keeps_nothing_over_its_new_holder(store: ObjectStore) -> None:
    first = claimed(store)
    found = store.get_record(NAME)
    assert found is not None
    expired = {"state": "running", "fingerprint": "f1", "expires": time.time() - 1}
    store.put_record_if(NAME, json.dumps(expired).encode(), found[1])  # it ran out unrenewed
    second = claimed(store)
    assert second.etag != first.etag
    assert not kept_answers.renew(store, first, "f1")
    assert kept_answers.keep(store, first, "f1", ANSWER, keep_s=60) == 0
    assert kept_answers.keep(store, second, "f1", ANSWER, keep_s=60) > 0
    assert kept_answers.claim(store, NAME, "f1") == ANSWER


def test_one_claim_wins_a_race(store: ObjectStore) -> None:
    def attempt(_: int) -> str:
        try:
            return type(kept_answers.claim(store, NAME, "f1")).__name__
        except ServiceError as error:
            return error.code

    with ThreadPoolExecutor(8) as pool:
        outcomes = sorted(pool.map(attempt, range(8)))
    assert outcomes == ["Claimed"] + ["idempotency_key_in_flight"] * 7


def test_a_claim_is_renewed_while_its_request_runs_and_its_answer_kept_after(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    scope: Scope = {
        "type": "http",
        "method": "PUT",
        "path": "/x",
        "raw_path": b"/x",
        "query_string": b"",
        "headers": [(b"idempotency-key", b"key-1")],
        "state": {"owner": "one caller"},
        BODY: b"body",
    }
    name = kept_answers.record_name(caller_scope(scope), "key-1")
    expiries: list[float] = []
    sent: list[Message] = []

    async def slow_app(scope: Scope, receive: Receive, send: Send) -> None:
        for _ in range(4):
            expiries.append(json.loads(store.get_record(name)[0])["expires"])  # type: ignore[index]
            await asyncio.sleep(0.15)
        start = {"type": "http.response.start", "status": 201, "headers": [(b"content-type", b"text/plain")]}
        await send(start)
        await send({"type": "http.response.body", "body": b"made"})

    async def receive() -> Message:
        return {"type": "http.disconnect"}

    async def send(message: Message) -> None:
        sent.append(message)

    middleware = IdempotencyMiddleware(slow_app, store, keep_s=60, keyed=lambda scope: True, renew_s=0.1)
    asyncio.run(middleware(scope, receive, send))
    assert expiries == sorted(expiries) and len(set(expiries)) >= 3  # renewed while it ran
    assert [message.get("status") for message in sent] == [201, None]
    kept = json.loads(store.get_record(name)[0])  # type: ignore[index]
    assert (kept["state"], kept["status"], kept["expires"] > time.time() + 59) == ("done", 201, True)
