"""The answers kept for Idempotency-Key: one record per (caller, key) in the object store, so every
replica sees what any of them began or finished.

    record "idem-<sha256 of the caller's scope and the key>.json" under the store's records prefix:
        {"state": "running", "fingerprint", "expires"}                a claim: the first request runs
        {"state": "done", "fingerprint", "expires", "status", "headers", "body"}   its whole answer

    claim   write a claim only while no record is there (a conditional write; a fresh key costs
                this one write) ─► Claimed: run the request
            a record there ─► read it: none, torn or past its expiry ─► replace exactly that one
                (a conditional write on its etag) ─► Claimed
            a record with another fingerprint ─► 422 idempotency_key_reused
            a running claim ─► 409 idempotency_key_in_flight (Retry-After: 1)
            a done record ─► Kept: answer it again
            a racing replica wrote first ─► read again (a few times, then 409)
    renew   a claim lasts CLAIM_S; its holder renews it every RENEW_S while the request runs, so a
            replica that dies frees the key within CLAIM_S
    keep    the claim becomes the answer, kept `keep_s` (24 h by default) from its end
    release the claim is deleted: the request ended without an answer worth repeating

Every call is blocking store I/O: the middleware (idempotency.py) runs them on worker threads.
"""

import base64
import hashlib
import json
import time
from dataclasses import dataclass
from typing import Any

from reactstep.service.errors import IdempotencyKeyInFlight, ValidationFailed
from reactstep.tools.errors import StaleFile
from reactstep.tools.store.objects import ObjectStore

CLAIM_S = 30.0
RENEW_S = 10.0
CLAIM_TRIES = 3


@dataclass(frozen=True)
class Answer:
    """An answer as the app sent it: status, headers (the raw ASGI pairs) and the whole body."""

    status: int
    headers: list[tuple[bytes, bytes]]
    body: bytes


@dataclass
class Claimed:
    """This request holds the key: its record's name and the etag of the claim it last wrote."""

    name: str
    etag: str


def record_name(scope_digest: str, key: str) -> str:
    """The record of one caller's key (both hashed: the record names neither)."""
    digest = hashlib.sha256(scope_digest.encode() + b"\n" + key.encode()).hexdigest()
    return f"idem-{digest}.json"


def claim(store: ObjectStore, name: str, fingerprint: str) -> Claimed | Answer:
    """Claim the key for this request, or the answer kept for it; 422 / 409 as the module says.
    A fresh key (the common case) costs one conditional write: the record is read only when one
    is there."""
    found: tuple[bytes, str] | None = None
    for _ in range(CLAIM_TRIES):
        try:
            etag = store.put_record_if(name, _claim_body(fingerprint), None if found is None else found[1])
        except StaleFile:
            found = store.get_record(name)  # someone's record: read it (None: deleted meanwhile)
        else:
            return Claimed(name, etag)
        record = None if found is None else _parsed(found[0])
        if record is not None and record["expires"] > time.time():
            return _standing(record, fingerprint)
        # none, torn, or past its expiry: the next try takes it over (only while it is still that one)
    raise IdempotencyKeyInFlight(
        "a request with this Idempotency-Key is being claimed by another replica; retry", retry_after_s=1
    )


def _standing(record: dict[str, Any], fingerprint: str) -> Answer:
    """The answer kept in a live record of this key; 422 for another request, 409 while it runs."""
    if record["fingerprint"] != fingerprint:
        raise ValidationFailed(
            "this Idempotency-Key was sent before with another request (method, path or body); "
            "send a new key for a new request",
            code="idempotency_key_reused",
        )
    if record["state"] != "done":
        raise IdempotencyKeyInFlight(
            "a request with this Idempotency-Key is still running; retry to get its answer", retry_after_s=1
        )
    return _answer(record)


def renew(store: ObjectStore, claimed: Claimed, fingerprint: str) -> bool:
    """Push the claim's expiry on; False when it was lost (taken over after it expired)."""
    try:
        claimed.etag = store.put_record_if(claimed.name, _claim_body(fingerprint), claimed.etag)
    except StaleFile:
        return False
    return True


def keep(store: ObjectStore, claimed: Claimed, fingerprint: str, answer: Answer, keep_s: float) -> int:
    """Turn the claim into the kept answer; the bytes kept (0 when the claim was lost meanwhile)."""
    record = {
        "state": "done",
        "fingerprint": fingerprint,
        "expires": time.time() + keep_s,
        "status": answer.status,
        "headers": [[name.decode("latin-1"), value.decode("latin-1")] for name, value in answer.headers],
        "body": base64.b64encode(answer.body).decode("ascii"),
    }
    data = json.dumps(record, separators=(",", ":")).encode()
    try:
        store.put_record_if(claimed.name, data, claimed.etag)
    except StaleFile:
        return 0
    return len(data)


def release(store: ObjectStore, claimed: Claimed) -> None:
    """Give the key up: the next request with it runs."""
    store.delete_record(claimed.name)


def _claim_body(fingerprint: str) -> bytes:
    record = {"state": "running", "fingerprint": fingerprint, "expires": time.time() + CLAIM_S}
    return json.dumps(record, separators=(",", ":")).encode()


def _parsed(data: bytes) -> dict[str, Any] | None:
    """The record, or None for one torn or not ours (treated as absent: it is replaced)."""
    try:
        record = json.loads(data)
        float(record["expires"])
        str(record["fingerprint"])
    except (ValueError, KeyError, TypeError):
        return None
    return record if isinstance(record, dict) and record.get("state") in ("running", "done") else None


def _answer(record: dict[str, Any]) -> Answer:
    headers = [(name.encode("latin-1"), value.encode("latin-1")) for name, value in record["headers"]]
    return Answer(int(record["status"]), headers, base64.b64decode(record["body"]))
