"""Writers of one path, racing on the local tree and on S3 (moto on loopback): the journal lists
their writes in the order they reached the store, a dead writer's lease runs out, and a write that
waits too long is refused with nothing written."""

import hashlib
import json
import threading
import time

import pytest

from reactstep.tools.errors import WriteBusy
from reactstep.tools.projects import leases
from reactstep.tools.projects.journal import Projects
from reactstep.tools.projects.journaled import JournaledStore
from reactstep.tools.projects.leases import holding, lease_name
from reactstep.tools.store.objects import ObjectStore


def test_racing_writers_of_one_path_are_journaled_in_store_order(store: ObjectStore) -> None:
    projects = Projects(store)
    projects.create("p")
    start = threading.Barrier(4)

    def writer(number: int) -> None:
        journaled = JournaledStore(store, projects, "sync")
        start.wait()
        for round_number in range(8):
            journaled.put("p", "same.py", f"writer {number} round {round_number}\n".encode())

    threads = [threading.Thread(target=writer, args=(number,)) for number in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    version, changes = projects.changes_since("p", 0)
    assert [change.version for change in changes] == list(range(1, 33)) and version == 32
    assert changes[-1].sha256 == hashlib.sha256(store.get("p", "same.py")).hexdigest()
    assert store.get_index_file("p", lease_name("same.py")) is None  # every lease was given back


def test_a_lease_left_by_a_dead_writer_runs_out(store: ObjectStore, monkeypatch: pytest.MonkeyPatch) -> None:
    projects = Projects(store)
    projects.create("p")
    stale = {"path": "a.py", "holder": "dead", "expires": time.time() - 1}
    store.put_index_file("p", lease_name("a.py"), json.dumps(stale).encode())
    JournaledStore(store, projects, "sync").put("p", "a.py", b"after\n")
    assert store.get("p", "a.py") == b"after\n"


def test_a_write_that_waits_too_long_is_refused(store: ObjectStore, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(leases, "WAIT_S", 0.2)
    projects = Projects(store)
    projects.create("p")
    with holding(store, "p", "a.py"):
        with pytest.raises(WriteBusy, match=r"another write to a\.py is in progress, so nothing was written"):
            JournaledStore(store, projects, "tool").put("p", "a.py", b"blocked\n")
        JournaledStore(store, projects, "tool").put("p", "b.py", b"other paths go on\n")
    assert store.head("p", "a.py") is None
    assert projects.head("p").version == 1
