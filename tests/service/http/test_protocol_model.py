"""A model-based test of the whole workspace protocol over HTTP, against the real app on the local store.

hypothesis drives one client folder and the server through random sequences of
    local edits (create, modify, delete, rename)     the folder only
    sync                                             POST /sync with the last base_version, PUT what it
                                                     asks with the ETags it gives and Content-Digest
                                                     (apply_deletes: true); its `version` becomes the
                                                     next base_version; a save during the upload is
                                                     refused as digest_mismatch
    pull                                             GET /changes?since=base, then GET each changed file
                                                     (refused whole when the folder edited one of them)
    fetch / override a reported conflict             GET the file, or PUT with If-Match: its ETag
    agent writes                                     execute_action preview, then the approved call
    another client's PUT and DELETE                  files routes without preconditions
and checks after every step, against a model of what the server must hold:
    - the server's head is the model's head, and the project version moved by one per change;
    - every byte string the server accepted is readable at its version (GET ?version=N), every path
      at every version at the end of an example, and each change feed entry's link reads its bytes;
    - a sync never uploads over, or deletes, a tool's change the folder has not fetched, and reports
      such a path as a conflict whenever the folder holds other bytes;
    - after a sync the server holds the folder except the conflicts; after a pull the folder holds
      the server's head except the paths it edited since it last synced.

REACTSTEP_MODEL_EXAMPLES and REACTSTEP_MODEL_STEPS run it longer than the suite's bounded budget.
"""

import base64
import hashlib
import os
import time
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)
from starlette.testclient import TestClient

from reactstep.service.http.app import create_app
from reactstep.service.settings import Settings
from reactstep.tools.embedding.embeddings import LocalEmbedder
from reactstep.tools.store.local import LocalStore

P = "/api/projects"
# A small alphabet, so paths collide often: nested, non-ASCII (NFC), and a case twin (one file on
# macOS and Windows, so the server never holds both).
PATHS = ("a.py", "A.py", "src/b.py", "src/ünï.py", "docs/日本.md")
CONTENTS = (*(f"value = {n}\n".encode() for n in range(4)), b"", "ß = 'é'\n".encode())
UNKNOWN = "unknown"  # a synced hash no file has: the folder's copy counts as edited
EXAMPLES = int(os.environ.get("REACTSTEP_MODEL_EXAMPLES", "20"))
STEPS = int(os.environ.get("REACTSTEP_MODEL_STEPS", "40"))


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def file_url(project: str, path: str, query: str = "") -> str:
    return f"{P}/{project}/files/{quote(path, safe='/')}" + (f"?{query}" if query else "")


def twin_in(path: str, paths: Any) -> str | None:
    """Another of `paths` that a case- and normalisation-insensitive disk makes one file with `path`."""
    key = unicodedata.normalize("NFC", path).casefold()
    return next(
        (other for other in paths if other != path and unicodedata.normalize("NFC", other).casefold() == key),
        None,
    )


def etag_header(etag: str) -> str:
    return etag if etag.startswith('"') else f'"{etag}"'


@dataclass
class Accepted:
    """One change the server accepted: the version it made and the bytes (None: a delete)."""

    version: int
    path: str
    data: bytes | None
    origin: str


@dataclass
class Client:
    """The client's folder and what it knows of the server."""

    folder: dict[str, bytes] = field(default_factory=dict)
    synced: dict[str, str] = field(default_factory=dict)  # path -> sha256 the server held when last seen
    base: int | None = None
    conflicts: dict[str, dict[str, Any]] = field(default_factory=dict)  # the last sync's, by path

    def dirty(self, path: str) -> bool:
        here = self.folder.get(path)
        return (sha(here) if here is not None else None) != self.synced.get(path)


@dataclass
class Coverage:
    """What the runs did, summed over examples (printed by the test)."""

    examples: int = 0
    steps: int = 0
    rules: dict[str, int] = field(default_factory=dict)
    outcomes: dict[str, int] = field(default_factory=dict)  # what the protocol answered, by kind
    versions_read: int = 0


class ProtocolModel(RuleBasedStateMachine):
    """The plugin's folder and the server, driven by hypothesis; each example gets a project of its own."""

    http: ClassVar[TestClient]
    coverage: ClassVar[Coverage]

    def __init__(self) -> None:
        super().__init__()
        self.coverage.examples += 1
        self.project = f"model-{self.coverage.examples}"
        self.head: dict[str, bytes] = {}
        self.version = 0
        self.accepted: list[Accepted] = []
        self.checked_up_to = 0  # accepted entries already read back at their version
        self.plugin = Client()
        self.tool_unseen: set[str] = set()  # paths whose server bytes a tool wrote, not fetched yet
        self.pending: list[tuple[dict[str, Any], str, bytes]] = []  # previews awaiting approval

    # -- helpers -------------------------------------------------------------------------------

    def count(self, name: str) -> None:
        self.coverage.steps += 1
        self.coverage.rules[name] = self.coverage.rules.get(name, 0) + 1

    def note(self, outcome: str, times: int = 1) -> None:
        self.coverage.outcomes[outcome] = self.coverage.outcomes.get(outcome, 0) + times

    def accept(self, path: str, data: bytes | None, origin: str, version: int) -> None:
        assert version == self.version + 1, (path, origin, version, self.version)
        self.version = version
        self.accepted.append(Accepted(version, path, data, origin))
        if data is None:
            self.head.pop(path, None)
        else:
            self.head[path] = data
        if origin == "tool":
            self.tool_unseen.add(path)
        else:
            self.tool_unseen.discard(path)

    def record(self, path: str, data: bytes | None, stored: dict[str, Any]) -> None:
        """A 200 answer to our PUT or DELETE: a change, unless the server held these bytes already."""
        if stored["changed"]:
            self.accept(path, data, "sync", stored["version"])
        else:
            assert self.head.get(path) == data, (path, stored)

    def refused_as_twin(self, path: str, response: Any) -> bool:
        """Whether a PUT of `path` had to be refused as the twin of another server file (and was)."""
        if path in self.head or twin_in(path, self.head) is None:
            return False
        assert (response.status_code, response.json()["error"]["code"]) == (409, "name_collision")
        self.note("PUT refused: twin")
        return True

    def server_version(self) -> int:
        response = self.http.get(f"{P}/{self.project}")
        assert response.status_code == 200, response.text
        version: int = response.json()["version"]
        return version

    def put(self, path: str, data: bytes, headers: dict[str, str], query: str = "") -> Any:
        return self.http.put(file_url(self.project, path, query), content=data, headers=headers)

    def fetch(self, path: str) -> None:
        """GET the file into the folder (removed when the server has none): the client has seen it."""
        response = self.http.get(file_url(self.project, path))
        if response.status_code == 404:
            assert response.json()["error"]["code"] == "file_not_found"
            self.plugin.folder.pop(path, None)
            self.plugin.synced.pop(path, None)
        else:
            assert response.status_code == 200, response.text
            self.plugin.folder[path] = response.content
            self.plugin.synced[path] = sha(response.content)
        self.tool_unseen.discard(path)
        self.plugin.conflicts.pop(path, None)

    # -- rules ---------------------------------------------------------------------------------

    @initialize()
    def create_project(self) -> None:
        assert self.http.put(f"{P}/{self.project}").status_code == 201

    @rule(
        path=st.sampled_from(PATHS),
        data=st.sampled_from((None, *CONTENTS)),
        rename_to=st.sampled_from((None, *PATHS)),
    )
    def edit_locally(self, path: str, data: bytes | None, rename_to: str | None) -> None:
        """The user renames the file to `rename_to`, or saves `data` in it (None: deletes it)."""
        self.count("edit_locally")
        folder = self.plugin.folder
        if rename_to is not None:
            if path in folder and path != rename_to:
                folder[rename_to] = folder.pop(path)
        elif data is None:
            folder.pop(path, None)
        else:
            folder[path] = data

    @rule(edit_meanwhile=st.sampled_from((None, *CONTENTS)))
    def sync(self, edit_meanwhile: bytes | None) -> None:
        """POST /sync, then PUT each upload with its ETag and the manifest's Content-Digest; when
        `edit_meanwhile` is set the user saves the first upload between the scan and its PUT."""
        self.count("sync")
        folder = self.plugin.folder
        manifest = {path: sha(data) for path, data in folder.items()}
        body = {"files": manifest, "base_version": self.plugin.base, "apply_deletes": True}
        response = self.http.post(f"{P}/{self.project}/sync", json=body)
        if any(twin_in(path, folder) for path in folder):
            assert (response.status_code, response.json()["error"]["code"]) == (409, "name_collision")
            self.note("sync refused: twins in the folder")
            return
        assert response.status_code == 200, response.text
        plan = response.json()
        self.check_plan(plan)
        for path in plan["deleted"]:
            self.accept(path, None, "sync", self.version + 1)
        unsent = set()
        for path in plan["upload"]:
            if edit_meanwhile is not None:
                folder[path], edit_meanwhile = edit_meanwhile, None
            if not self.upload(path, plan["etags"][path], manifest[path]):
                unsent.add(path)
        for path in unsent:
            self.plugin.synced[path] = UNKNOWN  # the server holds other bytes: dirty until synced
        self.plugin.base = plan["version"]
        self.plugin.conflicts = {item["path"]: item for item in plan["conflicts"]}
        for path in set(PATHS) - set(self.plugin.conflicts) - unsent:
            here = folder.get(path)
            assert self.head.get(path) == here, f"after a sync the server must hold the folder's {path}"
            self.tool_unseen.discard(path)  # the folder holds the server's bytes
            if here is None:
                self.plugin.synced.pop(path, None)
            else:
                self.plugin.synced[path] = sha(here)

    def check_plan(self, plan: dict[str, Any]) -> None:
        """No unfetched tool write is uploaded over or deleted, and each one is reported."""
        unseen = {path for path in self.tool_unseen if path in self.head}
        conflicts = {item["path"] for item in plan["conflicts"]}
        self.note("sync reported a conflict", len(conflicts))
        overwritten = sorted(unseen & set(plan["upload"]))
        assert not overwritten, f"sync asks to upload over unfetched tool writes {overwritten}"
        removed = sorted(unseen & set(plan["deleted"]))
        assert not removed, f"sync deleted unfetched tool writes {removed}"
        differing = {path for path in unseen if self.plugin.folder.get(path) != self.head[path]}
        assert differing <= conflicts, f"unfetched tool writes not reported: {differing}"
        assert plan["delete"] == []  # apply_deletes: true

    def upload(self, path: str, etag: str | None, announced: str) -> bool:
        """PUT the folder's bytes as the plan says; False when they are not what the manifest announced."""
        data = self.plugin.folder[path]
        headers = {"if-match": etag_header(etag)} if etag else {"if-none-match": "*"}
        headers["content-digest"] = f"sha-256=:{base64.b64encode(bytes.fromhex(announced)).decode()}:"
        query = f"base_version={self.plugin.base}" if self.plugin.base is not None else ""
        stored = self.put(path, data, headers, query)
        if sha(data) != announced:
            assert (stored.status_code, stored.json()["error"]["code"]) == (400, "digest_mismatch")
            self.note("upload refused: digest_mismatch")
            return False
        if self.refused_as_twin(path, stored):
            return False
        assert stored.status_code == 200, (path, stored.text)
        self.accept(path, data, "sync", stored.json()["version"])
        return True

    @rule()
    def pull(self) -> None:
        self.count("pull")
        since = self.plugin.base or 0
        response = self.http.get(f"{P}/{self.project}/changes?since={since}")
        assert response.status_code == 200, response.text
        feed = response.json()
        newest = {change["path"]: change["sha256"] for change in feed["changes"]}
        for change in feed["changes"]:
            self.read_link(change)
        refused = [
            path for path, digest in newest.items() if self.plugin.dirty(path) and self._here(path) != digest
        ]
        if refused:
            self.note("pull refused over a local edit")
            return  # a conflict, reported: nothing written, the base stays
        for path in sorted(newest):
            self.fetch(path)
        self.plugin.base = feed["version"]
        for path in PATHS:
            if not self.plugin.dirty(path):
                assert self.plugin.folder.get(path) == self.head.get(path), (
                    f"after a pull the folder must hold the server's {path}"
                )

    def read_link(self, change: dict[str, Any]) -> None:
        """A change's link reads the bytes it wrote (a delete has none)."""
        if change["sha256"] is None:
            return
        self.coverage.versions_read += 1
        linked = self.http.get(change["url"])
        assert (linked.status_code, sha(linked.content)) == (200, change["sha256"]), change

    def _here(self, path: str) -> str | None:
        data = self.plugin.folder.get(path)
        return sha(data) if data is not None else None

    @precondition(lambda self: bool(self.plugin.conflicts))
    @rule(data=st.data())
    def fetch_conflict(self, data: st.DataObject) -> None:
        """The user takes the server's copy of a reported conflict."""
        self.count("fetch_conflict")
        self.fetch(data.draw(st.sampled_from(sorted(self.plugin.conflicts))))

    @precondition(lambda self: any("etag" in item for item in self.plugin.conflicts.values()))
    @rule(data=st.data(), with_base=st.booleans())
    def override_conflict(self, data: st.DataObject, with_base: bool) -> None:
        """The user keeps the folder's copy on purpose: If-Match: the conflict's ETag (If-None-Match: *
        when it has none), with or without the base_version a plugin sends on every PUT."""
        self.count("override_conflict")
        with_etag = sorted(path for path, item in self.plugin.conflicts.items() if "etag" in item)
        path = data.draw(st.sampled_from(with_etag))
        item = self.plugin.conflicts.pop(path)
        headers = {"if-match": etag_header(item["etag"])} if item["etag"] else {"if-none-match": "*"}
        query = f"base_version={self.plugin.base}" if with_base and self.plugin.base is not None else ""
        here = self.plugin.folder.get(path)
        if here is None:
            response = self.http.delete(file_url(self.project, path, query), headers=headers)
        else:
            response = self.put(path, here, headers, query)
        now = self.head.get(path)
        if (sha(now) if now is not None else None) != item["sha256"]:
            assert response.status_code in (404, 412), response.text  # it changed since the conflict
            self.note("override refused: changed since the conflict")
            return
        assert response.status_code == 200, response.text
        self.note("override stored")
        self.record(path, here, response.json())
        if here is None:
            self.plugin.synced.pop(path, None)
        else:
            self.plugin.synced[path] = sha(here)

    @rule(path=st.sampled_from(PATHS), data=st.sampled_from(CONTENTS), approve=st.booleans())
    def agent_proposes(self, path: str, data: bytes, approve: bool) -> None:
        """execute_action without a token: a preview; approved at once, or kept for later."""
        self.count("agent_proposes")
        current = self.head.get(path)
        tool = "create_file" if current is None else "edit_file"
        body = {
            "project_id": self.project,
            "session_id": "model",
            "tool_name": tool,
            "tool_args": {"path": path, "content": data.decode()},
        }
        preview = self.execute(body)
        if current is None and twin_in(path, self.head) and preview["is_error"]:
            self.note("tool refused twin")
            return
        if current == data:
            assert "approval" not in preview, preview
            return
        assert preview["is_error"] is False, preview
        token = preview["approval"]["token"]
        self.pending.append(({**body, "approval_token": token}, path, current or b""))
        if approve:
            self.agent_approves(len(self.pending) - 1)

    @precondition(lambda self: bool(self.pending))
    @rule(data=st.data())
    def approve_later(self, data: st.DataObject) -> None:
        self.count("approve_later")
        self.agent_approves(data.draw(st.integers(0, len(self.pending) - 1)))

    def agent_approves(self, index: int) -> None:
        call, path, before = self.pending.pop(index)
        result = self.execute(call)
        new = call["tool_args"]["content"].encode()
        was_absent = call["tool_name"] == "create_file"
        unchanged = (path not in self.head) if was_absent else self.head.get(path) == before
        if result["observation"].startswith("Wrote "):
            assert unchanged, f"an approval wrote over a change made after its preview: {result}"
            self.accept(path, new, "tool", self.server_version())
            self.note("approved write")
        elif result["observation"].startswith("Already applied"):
            assert self.head.get(path) == new, result
            self.note("approval already applied")
        elif was_absent and twin_in(path, self.head):
            assert result["is_error"], result
            self.note("approval refused: twin")
        else:
            assert result["is_error"] and not unchanged, result
            self.note("approval refused: stale")

    def execute(self, body: dict[str, Any]) -> dict[str, Any]:
        response = self.http.post("/api/agent/execute_action", json=body)
        assert response.status_code == 200, response.text
        result: dict[str, Any] = response.json()
        return result

    @rule(path=st.sampled_from(PATHS), data=st.sampled_from((None, *CONTENTS)))
    def another_client(self, path: str, data: bytes | None) -> None:
        """Another client PUTs `data` (None: DELETEs the file) without preconditions."""
        self.count("another_client")
        if data is None:
            response = self.http.delete(file_url(self.project, path))
            if path not in self.head:
                assert response.status_code == 404, response.text
                return
        else:
            response = self.put(path, data, {})
            if self.refused_as_twin(path, response):
                return
        assert response.status_code == 200, response.text
        self.record(path, data, response.json())

    @rule()
    def collect_garbage(self) -> None:
        """POST .../gc: every version is within retention here (young, and far fewer than 100 per
        path), so the reads after it must all still answer."""
        self.count("collect_garbage")
        response = self.http.post(f"{P}/{self.project}/gc")
        assert response.status_code == 200, response.text
        self.note("gc removed a blob", len(response.json()["removed"]))

    # -- invariants ----------------------------------------------------------------------------

    @invariant()
    def the_server_never_holds_twins(self) -> None:
        twins = sorted(path for path in self.head if twin_in(path, self.head))
        assert not twins, f"the server holds {twins}: one file on a case-insensitive disk"

    @invariant()
    def server_holds_the_model(self) -> None:
        assert self.server_version() == self.version
        for path in PATHS:
            response = self.http.get(file_url(self.project, path))
            if path in self.head:
                assert (response.status_code, response.content) == (200, self.head[path]), path
            else:
                assert response.status_code == 404, (path, response.text)

    @invariant()
    def every_accepted_version_is_readable(self) -> None:
        for entry in self.accepted[self.checked_up_to :]:
            self.read_at(entry.path, entry.version, entry.data)
        self.checked_up_to = len(self.accepted)

    def read_at(self, path: str, version: int, expected: bytes | None) -> None:
        self.coverage.versions_read += 1
        response = self.http.get(file_url(self.project, path, f"version={version}"))
        if expected is None:
            assert response.status_code == 404, (path, version, response.text)
        else:
            assert (response.status_code, response.content) == (200, expected), (path, version)

    def teardown(self) -> None:
        """Every path at every version reads as the model says (history, not only the new entries)."""
        held: dict[str, bytes | None] = {}
        by_version = {entry.version: entry for entry in self.accepted}
        for version in range(1, self.version + 1):
            entry = by_version[version]
            held[entry.path] = entry.data
            for path in PATHS:
                self.read_at(path, version, held.get(path))


@pytest.fixture
def client(tmp_path: Path, local_embedder: LocalEmbedder) -> TestClient:
    settings = Settings(data_dir=tmp_path, approval_secret="model-test-secret")
    app = create_app(settings, store=LocalStore(tmp_path / "objects"), embedder=local_embedder)
    return TestClient(app, raise_server_exceptions=False)


def test_the_protocol_model_holds(client: TestClient, capsys: pytest.CaptureFixture[str]) -> None:
    coverage = Coverage()
    machine = type("BoundProtocolModel", (ProtocolModel,), {"http": client, "coverage": coverage})
    started = time.monotonic()
    run_state_machine_as_test(
        machine,
        settings=settings(
            max_examples=EXAMPLES,
            stateful_step_count=STEPS,
            deadline=None,
            derandomize=True,
            database=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
        ),
    )
    with capsys.disabled():
        print(
            f"\nprotocol model: {coverage.examples} examples, {coverage.steps} steps, "
            f"{coverage.versions_read} version reads in {time.monotonic() - started:.1f} s\n"
            f"rules {dict(sorted(coverage.rules.items()))}\n"
            f"outcomes {dict(sorted(coverage.outcomes.items()))}"
        )
