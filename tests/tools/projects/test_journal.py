"""The project journal on the local tree and on S3 (moto on loopback): versions without gaps or
duplicates, under racing writers too, and the store's hashes read only what changed."""

import hashlib
import threading

import pytest

from reactstep.tools.errors import ProjectNotFound
from reactstep.tools.projects.journal import Change, Projects, change_name
from reactstep.tools.projects.journaled import JournaledStore
from reactstep.tools.store.objects import ObjectStore


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_a_project_is_created_once_and_versions_count_its_changes(store: ObjectStore) -> None:
    projects = Projects(store)
    with pytest.raises(
        ProjectNotFound, match="project 'p' does not exist; create it with PUT /api/projects/p"
    ):
        projects.head("p")
    assert (projects.create("p"), projects.create("p")) == (True, False)
    head = projects.head("p")
    assert (head.version, head.indexed_version, head.index_state, head.indexed_at) == (0, 0, "ready", None)
    journaled = JournaledStore(store, projects, "sync")
    journaled.put("p", "a.py", b"one\n")
    journaled.put_if("p", "b.py", b"two\n", None)
    journaled.delete("p", "a.py")
    journaled.delete("p", "never-there.py")  # nothing deleted: nothing journaled
    assert journaled.changes == [
        Change(1, "a.py", sha(b"one\n"), "sync"),
        Change(2, "b.py", sha(b"two\n"), "sync"),
        Change(3, "a.py", None, "sync"),
    ]
    assert projects.changes_since("p", 0) == (3, journaled.changes)
    assert projects.changes_since("p", 2) == (3, journaled.changes[2:])
    assert projects.changes_since("p", 0, limit=2) == (3, journaled.changes[:2])
    assert projects.head("p").index_state == "stale"


def test_tool_changes_are_found_since_a_version(store: ObjectStore) -> None:
    projects = Projects(store)
    projects.create("p")
    JournaledStore(store, projects, "sync").put("p", "a.py", b"1")
    tool = JournaledStore(store, projects, "tool")
    tool.put("p", "a.py", b"2")
    tool.put("p", "b.py", b"3")
    tool.put("p", "a.py", b"4")
    assert projects.tool_changes_since("p", 0) == {"a.py": 4, "b.py": 3}
    assert projects.tool_changes_since("p", 3) == {"a.py": 4}
    assert projects.tool_changes_since("p", 4) == {}


def test_the_tool_window_falls_back_to_the_journal(
    store: ObjectStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("reactstep.tools.projects.journal.TOOL_WINDOW", 2)
    projects = Projects(store)
    projects.create("p")
    tool = JournaledStore(store, projects, "tool")
    for number in range(4):
        tool.put("p", f"f{number}.py", b"x")
    head = projects.head("p")
    assert (head.tool_changes, head.tool_window_from) == (((3, "f2.py"), (4, "f3.py")), 2)
    assert projects.tool_changes_since("p", 0) == {"f0.py": 1, "f1.py": 2, "f2.py": 3, "f3.py": 4}
    assert projects.tool_changes_since("p", 2) == {"f2.py": 3, "f3.py": 4}


def test_mark_indexed_moves_on_only_from_a_current_index(store: ObjectStore) -> None:
    projects = Projects(store)
    projects.create("p")
    journaled = JournaledStore(store, projects, "sync")
    journaled.put("p", "a.py", b"1")
    journaled.put("p", "b.py", b"2")
    projects.mark_indexed("p", 3, "c", since=1)  # the index described version 0 only: stays stale
    assert (projects.head("p").indexed_version, projects.head("p").index_state) == (0, "stale")
    projects.mark_indexed("p", 2, "c")
    assert (projects.head("p").indexed_version, projects.head("p").index_state) == (2, "ready")
    assert (projects.head("p").indexed_at is not None, projects.head("p").indexed_collection) == (True, "c")
    journaled.put("p", "c.py", b"3")
    projects.mark_indexed("p", 3, "other-model", since=2)  # collection c described 2, not this one
    assert (projects.head("p").indexed_version, projects.head("p").indexed_collection) == (2, "c")
    projects.mark_indexed("p", 3, "c", since=2)
    assert (projects.head("p").indexed_version, projects.head("p").index_state) == (3, "ready")
    projects.set_indexing("p", {"state": "running", "done": 1, "total": 2})
    assert (projects.head("p").index_state, projects.head("p").indexing) == (
        "indexing",
        {"state": "running", "done": 1, "total": 2},
    )
    projects.set_indexing("p", None)
    assert projects.head("p").index_state == "ready"


def test_a_project_stored_before_versions_is_adopted_at_version_0(store: ObjectStore) -> None:
    store.put("old", "a.py", b"x")
    projects = Projects(store)
    assert projects.head("old").version == 0
    assert projects.create("old") is False


def test_delete_removes_files_journal_and_index_files(store: ObjectStore) -> None:
    projects = Projects(store)
    projects.create("p")
    JournaledStore(store, projects, "sync").put("p", "src/a.py", b"x")
    store.put_index_file("p", "symbols.json", b"{}")
    projects.create("q")
    JournaledStore(store, projects, "sync").put("q", "a.py", b"y")
    projects.delete("p")
    assert list(store.list("p")) == []
    assert (store.get_index_file("p", "symbols.json"), store.get_index_file("p", change_name(1))) == (
        None,
        None,
    )
    assert not projects.exists("p")
    assert [info.path for info in store.list("q")] == ["a.py"]  # the other project is untouched
    assert projects.head("q").version == 1


def test_racing_writers_get_every_version_once(store: ObjectStore) -> None:
    projects = Projects(store)
    projects.create("p")
    writers, each = 4, 10
    barrier = threading.Barrier(writers)
    made: list[Change] = []
    failures: list[BaseException] = []

    def writer(number: int) -> None:
        journaled = JournaledStore(store, Projects(store), "tool" if number % 2 else "sync")
        barrier.wait()
        try:
            for item in range(each):
                journaled.put("p", f"w{number}/{item}.py", f"{number}-{item}".encode())
        except BaseException as exc:
            failures.append(exc)
        made.extend(journaled.changes)

    threads = [threading.Thread(target=writer, args=(number,)) for number in range(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    total = writers * each
    assert sorted(change.version for change in made) == list(range(1, total + 1))
    version, journal = projects.changes_since("p", 0, limit=total)
    assert version == total
    assert sorted(journal, key=lambda change: change.version) == sorted(
        made, key=lambda change: change.version
    )
    assert len({change.path for change in journal}) == total
    tool_paths = {change.path for change in journal if change.origin == "tool"}
    assert set(projects.tool_changes_since("p", 0)) == tool_paths


def test_a_writer_that_died_between_its_two_writes_leaves_no_gap(store: ObjectStore) -> None:
    projects = Projects(store)
    projects.create("p")
    orphan = b'{"origin": "tool", "path": "lost.py", "sha256": null, "version": 1}'
    store.put_index_file_if("p", change_name(1), orphan, None)  # its entry, but not its head update
    JournaledStore(store, projects, "sync").put("p", "a.py", b"x")
    version, journal = projects.changes_since("p", 0)
    assert (version, [item.version for item in journal]) == (2, [1, 2])
    assert projects.tool_changes_since("p", 0) == {"lost.py": 1}


class CountingStore(JournaledStore):
    """Counts file reads."""

    def __init__(self, base: ObjectStore) -> None:
        super().__init__(base, Projects(base), "sync")
        self.reads: list[str] = []

    def get(self, project_id: str, path: str) -> bytes:
        self.reads.append(path)
        return super().get(project_id, path)


def test_hashes_read_only_files_whose_etag_is_new(store: ObjectStore) -> None:
    store.put("p", "a.py", b"a")
    store.put("p", "b.py", b"b")
    counting = CountingStore(store)
    projects = Projects(counting)
    assert projects.hashes("p") == {"a.py": sha(b"a"), "b.py": sha(b"b")}
    assert sorted(counting.reads) == ["a.py", "b.py"]
    counting.reads.clear()
    assert projects.hashes("p") == {"a.py": sha(b"a"), "b.py": sha(b"b")}
    assert counting.reads == []
    store.put("p", "b.py", b"B")
    assert projects.hashes("p") == {"a.py": sha(b"a"), "b.py": sha(b"B")}
    assert counting.reads == ["b.py"]
