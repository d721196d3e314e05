"""The project routes over HTTP on the local store: lifecycle, files, sync, the change feed, indexing."""

import hashlib
import time
from collections.abc import Callable
from typing import Any

import pytest
from starlette.testclient import TestClient

from reactstep.client.traces.scripted_llm import ScriptedLLMServer
from reactstep.contract.sync import MAX_MANIFEST_FILES
from reactstep.tools.store.local import LocalStore

P = "/api/projects"


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def md5(data: bytes) -> str:
    return hashlib.md5(data).hexdigest()


@pytest.fixture
def client(make_client: Callable[..., TestClient]) -> TestClient:
    return make_client(approval_secret="projects-test-secret")


def error(response: Any) -> tuple[int, str]:
    return response.status_code, response.json()["error"]["code"]


def test_create_is_idempotent_and_reports_an_empty_project(client: TestClient) -> None:
    before = time.time()
    first = client.put(f"{P}/fresh")
    assert first.status_code == 201
    created = first.json()["created"]
    assert before <= created <= time.time()  # the incarnation: a project made again gets another
    assert first.json() == {
        "created": created,
        "project_id": "fresh",
        "files": 0,
        "bytes": 0,
        "chunks": 0,
        "version": 0,
        "indexed_version": 0,
        "index_state": "ready",
        "indexing": None,
    }
    again = client.put(f"{P}/fresh")
    assert (again.status_code, again.json()) == (200, first.json())


def test_a_missing_project_is_404_on_every_route_before_any_llm_call(
    client: TestClient, llm_server: ScriptedLLMServer
) -> None:
    calls = [
        client.get(f"{P}/nope"),
        client.delete(f"{P}/nope"),
        client.put(f"{P}/nope/files/a.py", content=b"x"),
        client.get(f"{P}/nope/files/a.py"),
        client.delete(f"{P}/nope/files/a.py"),
        client.post(f"{P}/nope/sync", json={"files": {}}),
        client.get(f"{P}/nope/changes"),
        client.post(f"{P}/nope/index", json={}),
        client.post(
            "/api/agent/react_step", json={"project_id": "nope", "session_id": "s", "user_query": "hi"}
        ),
        client.post(
            "/api/agent/execute_action",
            json={"project_id": "nope", "session_id": "s", "tool_name": "list_files", "tool_args": {}},
        ),
    ]
    assert [error(response) for response in calls] == [(404, "project_not_found")] * len(calls)
    message = calls[0].json()["error"]["message"]
    assert message == "project 'nope' does not exist; create it with PUT /api/projects/nope"
    assert llm_server.requests == []


def test_put_get_delete_a_file_with_etags(client: TestClient) -> None:
    client.put(f"{P}/web")
    stored = client.put(f"{P}/web/files/src/a.py", content=b"A = 1\n")
    assert stored.status_code == 200
    assert stored.json() == {
        "path": "src/a.py",
        "size": 6,
        "etag": md5(b"A = 1\n"),
        "sha256": sha(b"A = 1\n"),
        "version": 1,
        "changed": True,
        "index_state": "stale",  # never indexed
    }
    assert stored.headers["etag"] == '"' + md5(b"A = 1\n") + '"'
    fetched = client.get(f"{P}/web/files/src/a.py")
    assert (fetched.content, fetched.headers["etag"]) == (b"A = 1\n", stored.headers["etag"])
    unchanged = client.get(f"{P}/web/files/src/a.py", headers={"if-none-match": stored.headers["etag"]})
    assert (unchanged.status_code, unchanged.content) == (304, b"")
    same = client.put(f"{P}/web/files/src/a.py", content=b"A = 1\n")
    assert (same.json()["version"], same.json()["changed"]) == (1, False)
    gone = client.delete(f"{P}/web/files/src/a.py")
    assert (gone.status_code, gone.json()["version"], gone.json()["sha256"]) == (200, 2, None)
    assert error(client.get(f"{P}/web/files/src/a.py")) == (404, "file_not_found")
    assert error(client.delete(f"{P}/web/files/src/a.py")) == (404, "file_not_found")


def test_if_match_and_if_none_match_make_changes_conditional(client: TestClient) -> None:
    client.put(f"{P}/web")
    client.put(f"{P}/web/files/a.py", content=b"one\n")
    stale = {"if-match": '"' + md5(b"old") + '"'}
    assert error(client.put(f"{P}/web/files/a.py", content=b"two\n", headers=stale)) == (
        412,
        "precondition_failed",
    )
    assert error(client.delete(f"{P}/web/files/a.py", headers=stale)) == (412, "precondition_failed")
    create_only = {"if-none-match": "*"}
    assert error(client.put(f"{P}/web/files/a.py", content=b"two\n", headers=create_only)) == (
        412,
        "precondition_failed",
    )
    assert client.get(f"{P}/web/files/a.py").content == b"one\n"
    current = {"if-match": '"' + md5(b"one\n") + '"'}
    assert client.put(f"{P}/web/files/a.py", content=b"two\n", headers=current).status_code == 200
    assert client.put(f"{P}/web/files/b.py", content=b"new\n", headers=create_only).status_code == 200
    assert client.get(f"{P}/web").json()["version"] == 3


@pytest.mark.parametrize(
    "path",
    ["../escape.py", "a/../../b.py", "%2e%2e/x.py", "~/x.py", "a\\b.py", "a%00b.py", "a%07b.py", "a%0ab.py"],
)
def test_a_bad_path_is_refused_and_nothing_is_stored(client: TestClient, path: str) -> None:
    client.put(f"{P}/web")
    response = client.put(f"{P}/web/files/{path}", content=b"x")
    assert response.status_code in (404, 422)  # the router may refuse a '..' URL before we see it
    if response.status_code == 422:
        assert response.json()["error"]["code"] == "invalid_path"
    assert client.get(f"{P}/web").json()["files"] == 0


def test_a_body_over_the_limit_is_413_and_nothing_is_stored(make_client: Callable[..., TestClient]) -> None:
    client = make_client(file_max_bytes=10)
    client.put(f"{P}/web")
    assert error(client.put(f"{P}/web/files/big.bin", content=b"x" * 11)) == (413, "payload_too_large")
    assert client.get(f"{P}/web").json()["files"] == 0
    assert client.put(f"{P}/web/files/ok.bin", content=b"x" * 10).status_code == 200


def test_sync_lists_what_to_upload_and_deletes_only_when_told(client: TestClient) -> None:
    client.put(f"{P}/web")
    client.put(f"{P}/web/files/same.py", content=b"same\n")
    client.put(f"{P}/web/files/edited.py", content=b"old\n")
    client.put(f"{P}/web/files/extra.py", content=b"extra\n")
    manifest = {"same.py": sha(b"same\n"), "edited.py": sha(b"new\n"), "added.py": sha(b"added\n")}
    plan = client.post(f"{P}/web/sync", json={"files": manifest, "base_version": 3})
    assert plan.json() == {
        "version": 3,
        "head_version": 3,
        "upload": ["added.py", "edited.py"],
        "etags": {"added.py": None, "edited.py": md5(b"old\n")},
        "delete": ["extra.py"],
        "deleted": [],
        "conflicts": [],
        "index": None,
    }
    applied = client.post(f"{P}/web/sync", json={"files": manifest, "base_version": 3, "apply_deletes": True})
    assert (applied.json()["deleted"], applied.json()["version"]) == (["extra.py"], 3)  # planned at 3
    assert client.get(f"{P}/web").json()["version"] == 4
    assert error(client.get(f"{P}/web/files/extra.py")) == (404, "file_not_found")


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ({"files": {"a.py": "not-a-hash"}}, "validation_failed"),
        ({"files": {"a.py": "A" * 64}}, "validation_failed"),
        ({"files": {"../a.py": "a" * 64}}, "invalid_path"),
        ({"files": {"./a.py": "a" * 64}}, "validation_failed"),
        ({"files": {}, "base_version": -1}, "validation_failed"),
        ({"files": {}, "unknown": 1}, "validation_failed"),
    ],
)
def test_a_malformed_manifest_is_422(client: TestClient, body: dict[str, Any], code: str) -> None:
    client.put(f"{P}/web")
    assert error(client.post(f"{P}/web/sync", json=body)) == (422, code)


def test_a_manifest_over_the_file_limit_is_422(make_client: Callable[..., TestClient]) -> None:
    client = make_client()
    client.put(f"{P}/web")
    files = {f"f{n}.py": "a" * 64 for n in range(MAX_MANIFEST_FILES + 1)}
    response = client.post(f"{P}/web/sync", json={"files": files})
    assert error(response) == (422, "validation_failed")
    message = "files has 100,001 items; the limit is 100,000"
    assert response.json()["error"] == {
        "code": "validation_failed",
        "message": message,
        "details": [{"field": "files", "message": message}],
        "request_id": response.headers["x-request-id"],
    }


def test_a_base_version_ahead_of_the_project_is_409(client: TestClient) -> None:
    client.put(f"{P}/web")
    assert error(client.post(f"{P}/web/sync", json={"files": {}, "base_version": 5})) == (409, "conflict")
    assert error(client.get(f"{P}/web/changes?since=5")) == (409, "conflict")
    assert error(client.get(f"{P}/web/changes?since=-1")) == (422, "validation_failed")


def test_the_change_feed_lists_uploads_and_deletes_in_order(client: TestClient) -> None:
    client.put(f"{P}/web")
    client.put(f"{P}/web/files/a.py", content=b"a\n")
    client.put(f"{P}/web/files/b.py", content=b"b\n")
    client.delete(f"{P}/web/files/a.py")
    assert client.get(f"{P}/web/changes?since=1").json() == {
        "version": 3,
        "changes": [
            {
                "version": 2,
                "path": "b.py",
                "sha256": sha(b"b\n"),
                "origin": "sync",
                "url": f"{P}/web/files/b.py?version=2",
            },
            {"version": 3, "path": "a.py", "sha256": None, "origin": "sync", "url": None},
        ],
    }
    assert client.get(f"{P}/web/changes?since=3").json() == {"version": 3, "changes": []}


def approve(client: TestClient, project: str, args: dict[str, Any]) -> dict[str, Any]:
    body = {"project_id": project, "session_id": "s", "tool_name": "replace_in_file", "tool_args": args}
    preview = client.post("/api/agent/execute_action", json=body).json()
    token = preview["approval"]["token"]
    result: dict[str, Any] = client.post(
        "/api/agent/execute_action", json={**body, "approval_token": token}
    ).json()
    return result


def test_an_approved_write_is_journaled_as_a_tool_change_and_conflicts_with_a_stale_sync(
    client: TestClient,
) -> None:
    client.put(f"{P}/web")
    client.put(f"{P}/web/files/v.py", content=b"VERSION = '1.0'\n")
    written = approve(client, "web", {"path": "v.py", "find": "1.0", "replace": "2.0"})
    assert written["observation"] == "Wrote v.py (+1 -1 lines)."
    feed = client.get(f"{P}/web/changes?since=1").json()
    assert feed == {
        "version": 2,
        "changes": [
            {
                "version": 2,
                "path": "v.py",
                "sha256": sha(b"VERSION = '2.0'\n"),
                "origin": "tool",
                "url": f"{P}/web/files/v.py?version=2",
            }
        ],
    }
    stale = {"files": {"v.py": sha(b"VERSION = '1.0'\n")}, "base_version": 1}
    plan = client.post(f"{P}/web/sync", json=stale).json()
    server = {"sha256": sha(b"VERSION = '2.0'\n"), "etag": md5(b"VERSION = '2.0'\n")}
    assert (plan["upload"], plan["conflicts"]) == (
        [],
        [{"path": "v.py", "version": 2, **server, "base_sha256": sha(b"VERSION = '1.0'\n")}],
    )
    assert (plan["version"], plan["head_version"]) == (1, 2)  # the next base keeps the conflict in view
    refused = client.put(f"{P}/web/files/v.py?base_version=1", content=b"VERSION = '1.0'\n")
    assert error(refused) == (409, "conflict")
    fetched = {"files": {"v.py": sha(b"VERSION = '2.0'\n")}, "base_version": 1}
    assert client.post(f"{P}/web/sync", json=fetched).json()["conflicts"] == []


def test_index_states_follow_changes_and_an_approved_write_stays_searchable(client: TestClient) -> None:
    client.put(f"{P}/web")
    client.put(f"{P}/web/files/version.py", content=b"def version():\n    return '0.28.1'\n")
    assert client.get(f"{P}/web").json()["index_state"] == "stale"
    indexed = client.post(f"{P}/web/index", json={}).json()
    assert (indexed["files"], indexed["indexed_version"]) == (1, 1)
    report = client.get(f"{P}/web").json()
    assert (report["index_state"], report["version"], report["indexed_version"], report["chunks"]) == (
        "ready",
        1,
        1,
        1,
    )
    approve(client, "web", {"path": "version.py", "find": "0.28.1", "replace": "0.29.0"})
    report = client.get(f"{P}/web").json()
    assert (report["index_state"], report["version"], report["indexed_version"]) == ("ready", 2, 2)
    body = {
        "project_id": "web",
        "session_id": "s",
        "tool_name": "code_search",
        "tool_args": {"query": "version"},
    }
    found = client.post("/api/agent/execute_action", json=body).json()["observation"]
    assert "0.29.0" in found
    assert "0.28.1" not in found


def test_index_in_the_background_answers_202_and_the_project_reaches_ready(client: TestClient) -> None:
    client.put(f"{P}/web")
    client.put(f"{P}/web/files/a.py", content=b"def a():\n    return 1\n")
    started = client.post(f"{P}/web/index", json={"background": True})
    assert started.status_code == 202
    assert started.json()["project_id"] == "web"
    for _ in range(200):
        report = client.get(f"{P}/web").json()
        if report["index_state"] == "ready":
            break
        time.sleep(0.05)
    assert (report["index_state"], report["indexed_version"], report["chunks"]) == ("ready", 1, 1)


def test_index_streams_progress_then_the_result(client: TestClient) -> None:
    client.put(f"{P}/web")
    client.put(f"{P}/web/files/a.py", content=b"def a():\n    return 1\n")
    client.put(f"{P}/web/files/b.py", content=b"def b():\n    return 2\n")
    with client.stream("POST", f"{P}/web/index", json={"stream": True}) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        text = "".join(response.iter_text())
    names = [line.removeprefix("event: ") for line in text.splitlines() if line.startswith("event: ")]
    assert names[-1] == "result"
    assert "progress" in names
    assert '"phase":"done","files_done":2,"files_total":2,"chunks_done":2,"chunks_total":2' in text


def test_delete_removes_the_project_and_its_index(client: TestClient) -> None:
    client.put(f"{P}/web")
    client.put(f"{P}/web/files/a.py", content=b"def a():\n    return 1\n")
    client.post(f"{P}/web/index", json={})
    assert client.delete(f"{P}/web").status_code == 204
    assert error(client.get(f"{P}/web")) == (404, "project_not_found")
    recreated = client.put(f"{P}/web").json()
    assert (recreated["files"], recreated["chunks"], recreated["version"]) == (0, 0, 0)


def run_tool(client: TestClient, tool: str, args: dict[str, Any]) -> str:
    body = {"project_id": "web", "session_id": "s", "tool_name": tool, "tool_args": args}
    observation: str = client.post("/api/agent/execute_action", json=body).json()["observation"]
    return observation


def test_search_tools_never_show_a_file_changed_since_indexing(
    client: TestClient, local_store: LocalStore
) -> None:
    client.put(f"{P}/web")
    client.put(f"{P}/web/files/version.py", content=b"def version():\n    return '0.28.1'\n")
    client.put(f"{P}/web/files/other.py", content=b"def other():\n    return 'other'\n")
    client.post(f"{P}/web/index", json={})
    local_store.put("web", "version.py", b"def release():\n    return '0.29.0'\n")  # behind the journal
    note = (
        "\n(Left out: 1 file that changed since the project was indexed; "
        "POST /api/projects/web/index brings them back.)"
    )
    found = run_tool(client, "code_search", {"query": "version", "max_results": 5})
    assert "version.py" not in found
    # The one match went stale; what is left is below the relevance floor, and says so.
    assert found.startswith(
        'Found 0 results for "version" above the relevance floor, and 1 weaker one below it (showing 1):\n\n'
        "1. other.py:1-2 other"
    )
    assert found.endswith(note)
    defined = run_tool(client, "find_definition", {"symbol": "version"})
    assert (
        defined
        == 'No definition of "version" in the index. Try code_search or grep for other spellings.' + note
    )
    client.post(f"{P}/web/index", json={})
    assert "release" in run_tool(client, "code_search", {"query": "version", "max_results": 5})
    assert run_tool(client, "find_definition", {"symbol": "release"}) == (
        '1 definition of "release":\nversion.py:1 function release\n    def release():'
    )
