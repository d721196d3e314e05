"""One writer per file at a time, across threads and processes: a short lease beside the project.

    holding(project, path) ─► create lease-<hash of the path>.json only while absent (a conditional
        write: S3 / R2 If-None-Match, a lock on the local store)
        another writer holds it ─► wait (5 ms, doubling to 100 ms) up to WAIT_S, then WriteBusy
        its holder let it run out (LEASE_S: a process that died mid-write) ─► replace exactly that
            lease (If-Match on its ETag), so two waiters never both take it over
    inside: the file write and its journal entry ─► per path, the journal lists the writes in the
        order they reached the store, whichever replicas made them
    on leaving ─► the lease is deleted

A writer that dies inside leaves its file written and perhaps not journaled; the next write of the
path (or a sync, by the file's hash) brings the two in line again.
"""

import hashlib
import json
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

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
def holding(store: ObjectStore, project_id: str, path: str) -> Iterator[None]:
    """Hold the path's lease while the block runs; WriteBusy when it stays taken for WAIT_S."""
    name = lease_name(path)
    _take(store, project_id, name, path)
    try:
        yield
    finally:
        store.delete_index_file(project_id, name)


def _take(store: ObjectStore, project_id: str, name: str, path: str) -> None:
    deadline = time.monotonic() + WAIT_S
    pause = FIRST_PAUSE_S
    while True:
        body = json.dumps({"path": path, "holder": uuid.uuid4().hex, "expires": time.time() + LEASE_S})
        found = store.get_index_file_tagged(project_id, name)
        try:
            if found is None:
                store.put_index_file_if(project_id, name, body.encode(), None)
                return
            if _expired(found[0]):
                store.put_index_file_if(project_id, name, body.encode(), found[1])
                return
        except StaleFile:
            pass  # another writer took it first
        if time.monotonic() >= deadline:
            raise WriteBusy(path)
        time.sleep(pause)
        pause = min(pause * 2, LONGEST_PAUSE_S)


def _expired(data: bytes) -> bool:
    try:
        return float(json.loads(data)["expires"]) < time.time()
    except (ValueError, KeyError, TypeError):
        return True  # a torn lease holds nothing
