"""A tool's write the client has not seen is never overwritten by following the sync's answers.

The scenario: the client's last sync was at version 25, the agent's approved edit of src/app.py
makes version 26, and the user edited the same file locally.
"""

import hashlib
from collections.abc import Callable
from typing import Any

import pytest
from starlette.testclient import TestClient

from reactstep.tools.projects.journal import Projects
from reactstep.tools.projects.journaled import JournaledStore
from reactstep.tools.store.local import LocalStore

P = "/api/projects/web"
ORIGINAL = b"def main():\n    return 'v1'\n"
AGENTS = b"def main():\n    return 'agent'\n"
USERS = b"def main():\n    return 'user'\n"
OTHERS = {f"src/m{n:02d}.py": f"M = {n}\n".encode() for n in range(24)}


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def md5(data: bytes) -> str:
    return hashlib.md5(data).hexdigest()


def error(response: Any) -> tuple[int, str]:
    return response.status_code, response.json()["error"]["code"]


@pytest.fixture
def client(make_client: Callable[..., TestClient]) -> TestClient:
    """Project "web" at version 26: 25 uploads (the client's last sync), then the agent's approved write."""
    client = make_client(approval_secret="conflicts-test-secret")
    client.put(P)
    for path, data in OTHERS.items():
        client.put(f"{P}/files/{path}", content=data)
    client.put(f"{P}/files/src/app.py", content=ORIGINAL)
    assert client.get(P).json()["version"] == 25
    args = {"path": "src/app.py", "find": "'v1'", "replace": "'agent'"}
    body = {"project_id": "web", "session_id": "s", "tool_name": "replace_in_file", "tool_args": args}
    token = client.post("/api/agent/execute_action", json=body).json()["approval"]["token"]
    written = client.post("/api/agent/execute_action", json={**body, "approval_token": token}).json()
    assert written["observation"] == "Wrote src/app.py (+1 -1 lines)."
    assert client.get(P).json()["version"] == 26
    return client


def local(app: bytes) -> dict[str, bytes]:
    return {**OTHERS, "src/app.py": app}


def manifest(files: dict[str, bytes]) -> dict[str, str]:
    return {path: sha(data) for path, data in files.items()}


def follow(client: TestClient, files: dict[str, bytes], base: int) -> dict[str, Any]:
    """One sync done as the answer says: PUT each upload with its ETag and the base, then sync again."""
    plan: dict[str, Any] = client.post(
        f"{P}/sync", json={"files": manifest(files), "base_version": base}
    ).json()
    for path in plan["upload"]:
        etag = plan["etags"][path]
        headers = {"if-match": f'"{etag}"'} if etag else {"if-none-match": "*"}
        url = f"{P}/files/{path}?base_version={plan['version']}"
        assert client.put(url, content=files[path], headers=headers).status_code == 200
    return plan


def test_following_the_answers_never_overwrites_the_agents_write(client: TestClient) -> None:
    plan = client.post(f"{P}/sync", json={"files": manifest(local(USERS)), "base_version": 25}).json()
    conflict = {
        "path": "src/app.py",
        "version": 26,
        "sha256": sha(AGENTS),
        "etag": md5(AGENTS),
        "base_sha256": sha(ORIGINAL),  # what the path held at the client's base: a 3-way merge's base
    }
    assert plan == {
        "version": 25,
        "head_version": 26,
        "upload": [],
        "etags": {},
        "delete": [],
        "deleted": [],
        "conflicts": [conflict],
        "index": None,
    }
    base = plan["version"]
    for _ in range(3):  # however often the plugin follows the answer, the conflict stays a conflict
        plan = follow(client, local(USERS), base)
        assert (plan["upload"], plan["conflicts"], plan["version"]) == ([], [conflict], 25)
        base = plan["version"]
    assert client.get(f"{P}/files/src/app.py").content == AGENTS
    assert client.get(P).json()["version"] == 26


def test_fetching_the_tools_write_clears_the_conflict(client: TestClient) -> None:
    fetched = client.get(f"{P}/files/src/app.py")
    assert (fetched.content, fetched.headers["etag"]) == (AGENTS, f'"{md5(AGENTS)}"')
    plan = client.post(f"{P}/sync", json={"files": manifest(local(AGENTS)), "base_version": 25}).json()
    assert (plan["conflicts"], plan["upload"], plan["version"], plan["head_version"]) == ([], [], 26, 26)
    merged = local(b"def main():\n    return 'agent and user'\n")
    plan = follow(client, merged, plan["version"])
    assert client.get(f"{P}/files/src/app.py").content == merged["src/app.py"]
    plan = client.post(f"{P}/sync", json={"files": manifest(merged), "base_version": 26}).json()
    assert (plan["conflicts"], plan["upload"], plan["version"]) == ([], [], 27)


def test_if_match_with_the_conflicts_etag_overrides_on_purpose(client: TestClient) -> None:
    plan = client.post(f"{P}/sync", json={"files": manifest(local(USERS)), "base_version": 25}).json()
    etag = plan["conflicts"][0]["etag"]
    url = f"{P}/files/src/app.py?base_version={plan['version']}"
    stored = client.put(url, content=USERS, headers={"if-match": f'"{etag}"'})
    assert (stored.status_code, stored.json()["version"], stored.json()["sha256"]) == (200, 27, sha(USERS))
    assert client.get(f"{P}/files/src/app.py").content == USERS
    plan = client.post(f"{P}/sync", json={"files": manifest(local(USERS)), "base_version": 25}).json()
    assert (plan["conflicts"], plan["upload"], plan["version"]) == ([], [], 27)
    # The override made the tool's change seen: a later local edit is an upload, not a conflict.
    again = local(b"def main():\n    return 'user, later'\n")
    plan = client.post(f"{P}/sync", json={"files": manifest(again), "base_version": 25}).json()
    assert (plan["conflicts"], plan["upload"], plan["etags"]) == (
        [],
        ["src/app.py"],
        {"src/app.py": md5(USERS)},
    )


@pytest.mark.parametrize(
    ("headers", "status", "code"),
    [
        ({}, 409, "conflict"),
        ({"if-match": "*"}, 409, "conflict"),  # "any ETag" names none: not an override
        ({"if-match": f'"{md5(ORIGINAL)}"'}, 412, "precondition_failed"),  # the ETag from before the tool
        ({"if-match": '"0123"'}, 412, "precondition_failed"),
        ({"if-none-match": "*"}, 412, "precondition_failed"),
    ],
)
@pytest.mark.parametrize("method", ["PUT", "DELETE"])
def test_a_write_over_the_unseen_tool_change_without_its_etag_changes_nothing(
    client: TestClient, method: str, headers: dict[str, str], status: int, code: str
) -> None:
    url = f"{P}/files/src/app.py?base_version=25"
    response = client.request(method, url, content=USERS if method == "PUT" else None, headers=headers)
    assert error(response) == (status, code)
    message = response.json()["error"]["message"]
    if status == 412:
        assert response.headers["etag"] == f'"{md5(AGENTS)}"'
        assert md5(AGENTS) in message
    else:
        assert message == (
            "src/app.py was changed by a tool at version 26, after your base_version 25; fetch it "
            f'(GET .../files/src/app.py) and merge, or send If-Match: "{md5(AGENTS)}" to replace it '
            "on purpose; nothing was changed"
        )
        details = {"path": "src/app.py", "version": 26, "etag": md5(AGENTS), "sha256": sha(AGENTS)}
        assert response.json()["error"]["details"] == details
    assert client.get(f"{P}/files/src/app.py").content == AGENTS
    assert client.get(P).json()["version"] == 26


def test_delete_with_the_conflicts_etag_overrides_on_purpose(client: TestClient) -> None:
    url = f"{P}/files/src/app.py?base_version=25"
    gone = client.delete(url, headers={"if-match": f'"{md5(AGENTS)}"'})
    assert (gone.status_code, gone.json()["version"]) == (200, 27)
    assert error(client.get(f"{P}/files/src/app.py")) == (404, "file_not_found")


AHEAD = "project 'web' has no version 27 yet; its latest is version 26 (GET /api/projects/web)"
SINCE_LAST_SYNC = "send the version of your last sync, or base_version null to compare every file"
READ_AT = "send the project version your copy of the file was read at"


@pytest.mark.parametrize(
    ("method", "url", "message"),
    [
        ("POST", f"{P}/sync", f"base_version 27: {AHEAD}; {SINCE_LAST_SYNC}"),
        ("GET", f"{P}/changes?since=27", f"since 27: {AHEAD}; ask for the changes since 26 or earlier"),
        ("PUT", f"{P}/files/src/app.py?base_version=27", f"base_version 27: {AHEAD}; {READ_AT}"),
        ("PUT", f"{P}/files/src/new.py?base_version=27", f"base_version 27: {AHEAD}; {READ_AT}"),
        ("DELETE", f"{P}/files/src/app.py?base_version=27", f"base_version 27: {AHEAD}; {READ_AT}"),
        ("GET", f"{P}/files/src/app.py?version=27", AHEAD),
    ],
)
def test_a_version_ahead_of_the_project_is_409_on_every_route(
    client: TestClient, method: str, url: str, message: str
) -> None:
    """The server keeps nothing of a deleted project, so it says what it knows: not that the
    project was deleted and created again, but that the version does not exist yet, which one does."""
    body = {"files": manifest(local(AGENTS)), "base_version": 27}
    response = client.request(
        method,
        url,
        json=body if method == "POST" else None,
        content=USERS if method == "PUT" else None,
        headers={"if-match": f'"{md5(AGENTS)}"'} if method in ("PUT", "DELETE") else {},
    )
    assert error(response) == (409, "conflict")
    assert response.json()["error"]["message"] == message
    assert client.get(f"{P}/files/src/app.py").content == AGENTS
    assert error(client.get(f"{P}/files/src/new.py")) == (404, "file_not_found")
    assert client.get(P).json()["version"] == 26


def test_a_tools_delete_is_a_conflict_until_fetched_or_recreated_on_purpose(
    make_client: Callable[..., TestClient], local_store: LocalStore
) -> None:
    # No tool deletes files today; a journaled delete of origin "tool" stands for one that will.
    client = make_client()
    client.put(P)
    client.put(f"{P}/files/src/app.py", content=ORIGINAL)
    JournaledStore(local_store, Projects(local_store), "tool").delete("web", "src/app.py")
    files = {"src/app.py": sha(USERS)}
    plan = client.post(f"{P}/sync", json={"files": files, "base_version": 1}).json()
    gone = {"path": "src/app.py", "version": 2, "sha256": None, "etag": None, "base_sha256": sha(ORIGINAL)}
    assert (plan["upload"], plan["conflicts"], plan["version"]) == ([], [gone], 1)
    url = f"{P}/files/src/app.py?base_version=1"
    assert error(client.put(url, content=USERS)) == (409, "conflict")
    assert error(client.get(f"{P}/files/src/app.py")) == (404, "file_not_found")
    assert client.put(url, content=USERS, headers={"if-none-match": "*"}).status_code == 200
    plan = client.post(f"{P}/sync", json={"files": files, "base_version": 1}).json()
    assert (plan["upload"], plan["conflicts"], plan["version"]) == ([], [], 3)
