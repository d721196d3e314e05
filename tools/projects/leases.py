"""One writer per file at a time, across threads and processes: a short lease beside the project.

    holding(project, path) ─► create lease-<hash of the path>.json only while absent (a conditional
        write: S3 / R2 If-None-Match, a lock on the local store)
        another writer holds it ─► wait (5 ms, doubling to 100 ms) up to WAIT_S, then WriteBusy
        its holder let it run out (LEASE_S: a process that died mid-write) ─► replace exactly that
            lease (If-Match on its ETag), so two waiters never both take it over
    inside: the file write and its journal entry ─► per path, the journal lists the writes in the
        order they reached the store, whichever replicas made them
    on leaving ─► the lease is deleted

The lease records the writer's intent (the new bytes' sha256, its origin, the project version
before it) and its process (machine and pid). A writer that dies inside leaves its file written and
perhaps not journaled: its lease is taken over once it expires, or at once when its process is
known dead (same machine, pid gone), and the new holder gets the intent to finish that write
(recovery.py) before its own.
"""

import functools
import hashlib
import json
import os
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from reactstep.tools.errors import StaleFile, WriteBusy
from reactstep.tools.store.objects import ObjectStore

LEASE_S = 30.0
WAIT_S = 20.0
FIRST_PAUSE_S = 0.005
LONGEST_PAUSE_S = 0.1


def lease_name(path: str) -> str:
    """The index file holding the lease of one path."""
    return f"lease-{hashlib.sha256(path.encode()).hexdigest()[:40]}.json"


@contextmanager
def holding(
    store: ObjectStore, project_id: str, path: str, intent: dict[str, Any] | None = None
) -> Iterator[dict[str, Any] | None]:
    """Hold the path's lease while the block runs; WriteBusy when it stays taken for WAIT_S.

    The block gets the intent a dead holder left in the lease (None: the lease was free or its
    holder finished), so it can finish that holder's write first.
    """
    name = lease_name(path)
    left = _take(store, project_id, name, path, intent)
    try:
        yield left
    finally:
        store.delete_index_file(project_id, name)


def left_intent(store: ObjectStore, project_id: str, path: str) -> dict[str, Any] | None:
    """The intent of a lease whose holder is gone (expired or dead); None when there is none."""
    found = store.get_index_file(project_id, lease_name(path))
    if found is None or not _expired(found):
        return None
    return _intent(found)


def _take(
    store: ObjectStore, project_id: str, name: str, path: str, intent: dict[str, Any] | None
) -> dict[str, Any] | None:
    deadline = time.monotonic() + WAIT_S
    pause = FIRST_PAUSE_S
    while True:
        found = store.get_index_file_tagged(project_id, name)
        left = None if found is None else _intent(found[0])
        try:
            if found is None:
                store.put_index_file_if(project_id, name, _body(path, intent, None), None)
                return None
            if _expired(found[0]):
                store.put_index_file_if(project_id, name, _body(path, intent, left), found[1])
                return left
        except StaleFile:
            pass  # another writer took it first
        if time.monotonic() >= deadline:
            raise WriteBusy(path)
        time.sleep(pause)
        pause = min(pause * 2, LONGEST_PAUSE_S)


def _body(path: str, intent: dict[str, Any] | None, left: dict[str, Any] | None) -> bytes:
    """A lease for this process; a dead holder's unfinished version range carries over."""
    if intent is not None and left is not None and "after" in left:
        intent = {**intent, "after": min(int(intent.get("after", left["after"])), int(left["after"]))}
    body = {
        "path": path,
        "holder": uuid.uuid4().hex,
        "expires": time.time() + LEASE_S,
        "machine": _machine(),
        "pid": os.getpid(),
        "intent": intent if intent is not None else left,
    }
    return json.dumps(body).encode()


def _expired(data: bytes) -> bool:
    try:
        lease = json.loads(data)
        if float(lease["expires"]) < time.time():
            return True
        return (
            lease.get("machine") is not None
            and lease.get("machine") == _machine()
            and not _alive(lease["pid"])
        )
    except (ValueError, KeyError, TypeError):
        return True  # a torn lease holds nothing


def _intent(data: bytes) -> dict[str, Any] | None:
    try:
        intent = json.loads(data).get("intent")
    except (ValueError, AttributeError):
        return None
    return intent if isinstance(intent, dict) else None


def _alive(pid: object) -> bool:
    """Whether process `pid` of this machine runs (a pid we cannot signal still counts as alive)."""
    if not isinstance(pid, int):
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


@functools.cache
def _machine() -> str | None:
    """This machine and pid namespace (None when unknown: then only expiry frees a lease)."""
    try:
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
        return f"{boot}:{os.readlink('/proc/self/ns/pid')}"
    except OSError:
        return None
