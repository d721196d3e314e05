"""Versions of a path on the local tree and on S3 (moto on loopback): sha256_at answers the exact
bytes' hash at each version, bytes stored before versions were kept stay readable once replaced,
retention keeps a path's last 100, garbage collection deletes only what no kept version needs, and a
dead writer's lease is taken over at once."""

import hashlib
import json
import subprocess
import sys
import time

import pytest

from reactstep.tools.errors import VersionNotKept
from reactstep.tools.projects import crash_points
from reactstep.tools.projects.blobs import read_blob
from reactstep.tools.projects.gc import GRACE_S, collect_garbage
from reactstep.tools.projects.journal import Projects
from reactstep.tools.projects.journaled import JournaledStore
from reactstep.tools.projects.leases import holding, lease_name
from reactstep.tools.projects.versioned import sha256_at
from reactstep.tools.store.objects import ObjectStore
from tests.timing import LOAD_SLACK_S


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_sha256_at_answers_each_version_of_a_path(store: ObjectStore) -> None:
    projects = Projects(store)
    projects.create("p")
    journaled = JournaledStore(store, projects, "sync")
    journaled.put("p", "a.py", b"one\n")  # 1
    journaled.put("p", "b.py", b"b\n")  # 2
    journaled.delete("p", "a.py")  # 3
    journaled.put("p", "a.py", b"two\n")  # 4
    answers = [sha256_at(store, projects, "p", "a.py", version) for version in range(5)]
    assert answers == [None, sha(b"one\n"), sha(b"one\n"), None, sha(b"two\n")]
    assert sha256_at(store, projects, "p", "never.py", 4) is None
    assert read_blob(store, "p", sha(b"one\n")) == b"one\n"


def test_bytes_stored_before_versions_are_kept_when_replaced(store: ObjectStore) -> None:
    store.put("p", "old.py", b"legacy\n")  # no journal, no history: stored before versions were kept
    projects = Projects(store)
    assert projects.head("p").version == 0
    with pytest.raises(VersionNotKept):
        sha256_at(store, projects, "p", "old.py", -1)
    JournaledStore(store, projects, "sync").put("p", "old.py", b"replaced\n")
    assert sha256_at(store, projects, "p", "old.py", 0) == sha(b"legacy\n")
    assert read_blob(store, "p", sha(b"legacy\n")) == b"legacy\n"


def test_gc_deletes_only_bytes_no_kept_version_needs(store: ObjectStore) -> None:
    projects = Projects(store, retention_s=0)
    projects.create("p")
    journaled = JournaledStore(store, projects, "sync")
    contents = [f"v{number}\n".encode() for number in range(1, 106)]
    contents[-1] = contents[0]  # version 105 brings back the bytes of version 1
    for data in contents:
        journaled.put("p", "a.py", data)
    with pytest.raises(VersionNotKept):
        sha256_at(store, projects, "p", "a.py", 5)
    assert sha256_at(store, projects, "p", "a.py", 6) == sha(b"v6\n")

    early = collect_garbage(store, projects, "p")  # loose for less than the grace: kept
    assert (early.removed, early.paths) == ([], 1)
    later = collect_garbage(store, projects, "p", now=time.time() + GRACE_S + 1)
    assert later.removed == sorted(sha(f"v{number}\n".encode()) for number in range(2, 6))
    for number in range(2, 6):
        assert read_blob(store, "p", sha(f"v{number}\n".encode())) is None
    assert read_blob(store, "p", sha(b"v1\n")) == b"v1\n"  # the current bytes
    assert read_blob(store, "p", sha(b"v6\n")) == b"v6\n"  # a kept version
    again = collect_garbage(store, projects, "p", now=time.time() + GRACE_S + 1)
    assert again.removed == []


def test_a_dead_writers_lease_is_taken_over_at_once(store: ObjectStore) -> None:
    projects = Projects(store)
    projects.create("p")
    journaled = JournaledStore(store, projects, "sync")
    journaled.put("p", "a.py", b"before\n")
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True)
    store.put("p", "a.py", b"written, never journaled\n")  # what the dead writer got done
    machine = json.loads(_a_lease_of_this_process(store))["machine"]
    lease = {
        "path": "a.py",
        "holder": "dead",
        "expires": time.time() + 3600,
        "machine": machine,
        "pid": int(dead.stdout),
        "intent": {"sha256": sha(b"written, never journaled\n"), "origin": "tool", "after": 1},
    }
    store.put_index_file("p", lease_name("a.py"), json.dumps(lease).encode())
    started = time.monotonic()
    assert sha256_at(store, projects, "p", "a.py", 2) == sha(b"written, never journaled\n")
    assert time.monotonic() - started < 5 + LOAD_SLACK_S  # not the lease's hour
    _, changes = projects.changes_since("p", 0)
    assert [(change.version, change.origin) for change in changes] == [(1, "sync"), (2, "tool")]


def _a_lease_of_this_process(store: ObjectStore) -> bytes:
    with holding(store, "p", "probe.py"):
        found = store.get_index_file("p", lease_name("probe.py"))
    assert found is not None
    return found


def test_a_write_that_reuses_bytes_gc_deletes_meanwhile_keeps_them(store: ObjectStore) -> None:
    projects = Projects(store, retention_s=0)
    projects.create("p")
    journaled = JournaledStore(store, projects, "sync")
    for number in range(101):  # version 1's bytes leave q.py's kept versions: loose, a gc candidate
        journaled.put("p", "q.py", f"q{number}\n".encode())
    collected: list[list[str]] = []

    def collect_now(point: str) -> None:  # runs between the blob check and the file write
        if point == "write.blob-kept" and not collected:
            collected.append(collect_garbage(store, projects, "p", now=time.time() + GRACE_S + 1).removed)

    crash_points.on_point(collect_now)
    try:
        journaled.put("p", "p.py", b"q0\n")  # the bytes q.py held at version 1
    finally:
        crash_points.off_point(collect_now)
    assert collected == [[sha(b"q0\n")]]  # gc took them, as nothing named them yet
    assert read_blob(store, "p", sha(b"q0\n")) == b"q0\n"  # the write put them back
    assert sha256_at(store, projects, "p", "p.py", 102) == sha(b"q0\n")
