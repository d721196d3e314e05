"""The write tools through execute_action: preview, approved write, repeat, and every refusal."""

import base64
import json
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from reactstep.client.traces.scripted_llm import ScriptedLLMServer
from reactstep.service.backends import open_store, s3_client
from reactstep.service.http.app import create_app
from reactstep.service.settings import Settings
from reactstep.tools.store.local import LocalStore
from reactstep.tools.store.objects import ObjectInfo

SECRET = "test-approval-secret-0123456789abcdef"
AGAIN = "Nothing was written. Propose the change again to get a fresh preview for the user to approve."
APP_PY = b"def main():\n    return 42\n"
APP_43 = b"def main():\n    return 43\n"
APP_DIFF_43 = (
    "--- a/src/app.py\n+++ b/src/app.py\n@@ -1,2 +1,2 @@\n def main():\n-    return 42\n+    return 43\n"
)
NOTES = b"one\ntwo\nthree\ntwo\n"


@pytest.fixture
def client(make_client: Callable[..., TestClient], local_store: LocalStore) -> TestClient:
    """An app over the demo project (plus notes.txt and plain.txt) with a fixed approval secret."""
    local_store.put("demo", "notes.txt", NOTES)
    local_store.put("demo", "plain.txt", b"a\nb")
    return make_client(approval_secret=SECRET)


def call(
    client: TestClient, tool_name: str, args: dict[str, Any], token: str | None = None, project: str = "demo"
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "project_id": project,
        "session_id": "s-w",
        "tool_name": tool_name,
        "tool_args": args,
    }
    if token is not None:
        body["approval_token"] = token
    response = client.post("/api/agent/execute_action", json=body)
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()
    return result


def preview_text(path: str, counts: str, diff: str) -> str:
    return (
        f"Nothing was written yet. The user must approve this change to {path} ({counts}) "
        f"before it is written:\n{diff.rstrip()}"
    )


# tool, args, the diff, the counts the preview reports, the file after the write
WRITES = {
    "create_file": (
        "create_file",
        {"path": "src/new.py", "content": "x = 1\n", "description": "a new module"},
        "--- /dev/null\n+++ b/src/new.py\n@@ -0,0 +1 @@\n+x = 1\n",
        "+1 -0 lines",
        b"x = 1\n",
    ),
    "create_file empty": (
        "create_file",
        {"path": "pkg/__init__.py", "content": ""},
        "--- /dev/null\n+++ b/pkg/__init__.py\n",
        "+0 -0 lines",
        b"",
    ),
    "edit_file": (
        "edit_file",
        {"path": "./src//app.py", "content": APP_43.decode()},
        APP_DIFF_43,
        "+1 -1 lines",
        APP_43,
    ),
    "replace_in_file literal": (
        "replace_in_file",
        {"path": "src/app.py", "find": "42", "replace": "43"},
        APP_DIFF_43,
        "+1 -1 lines, 1 replacement",
        APP_43,
    ),
    "replace_in_file literal count": (
        "replace_in_file",
        {"path": "notes.txt", "find": "two", "replace": "2", "count": 1},
        "--- a/notes.txt\n+++ b/notes.txt\n@@ -1,4 +1,4 @@\n one\n-two\n+2\n three\n two\n",
        "+1 -1 lines, 1 replacement",
        b"one\n2\nthree\ntwo\n",
    ),
    "replace_in_file regex every line": (
        "replace_in_file",
        {"path": "notes.txt", "find": "^t(\\w+)$", "replace": "T\\1!", "regex": True},
        "--- a/notes.txt\n+++ b/notes.txt\n@@ -1,4 +1,4 @@\n one\n"
        "-two\n-three\n-two\n+Two!\n+Three!\n+Two!\n",
        "+3 -3 lines, 3 replacements",
        b"one\nTwo!\nThree!\nTwo!\n",
    ),
    "replace_in_file regex named group, non-ASCII": (
        "replace_in_file",
        {
            "path": "src/app.py",
            "find": "return (?P<n>\\d+)",
            "replace": "return \\g<n> + 1  # «é»",
            "regex": True,
        },
        "--- a/src/app.py\n+++ b/src/app.py\n@@ -1,2 +1,2 @@\n def main():\n-    return 42\n"
        "+    return 42 + 1  # «é»\n",
        "+1 -1 lines, 1 replacement",
        "def main():\n    return 42 + 1  # «é»\n".encode(),
    ),
    "edit_lines insert": (
        "edit_lines",
        {"path": "src/app.py", "operation": "insert", "start_line": 1, "content": "import os"},
        "--- a/src/app.py\n+++ b/src/app.py\n@@ -1,2 +1,3 @@\n+import os\n def main():\n     return 42\n",
        "+1 -0 lines, insert before line 1",
        b"import os\ndef main():\n    return 42\n",
    ),
    "edit_lines append": (
        "edit_lines",
        {"path": "src/app.py", "operation": "insert", "start_line": 3, "content": "\nmain()"},
        "--- a/src/app.py\n+++ b/src/app.py\n@@ -1,2 +1,4 @@\n def main():\n     return 42\n+\n+main()\n",
        "+2 -0 lines, insert before line 3",
        b"def main():\n    return 42\n\nmain()\n",
    ),
    "edit_lines append without final newline": (
        "edit_lines",
        {"path": "plain.txt", "operation": "insert", "start_line": 3, "content": "c"},
        "--- a/plain.txt\n+++ b/plain.txt\n@@ -1,2 +1,3 @@\n a\n-b\n\\ No newline at end of file\n"
        "+b\n+c\n\\ No newline at end of file\n",
        "+2 -1 lines, insert before line 3",
        b"a\nb\nc",
    ),
    "edit_lines delete": (
        "edit_lines",
        {"path": "notes.txt", "operation": "delete", "start_line": 1, "end_line": 2, "content": "ignored"},
        "--- a/notes.txt\n+++ b/notes.txt\n@@ -1,4 +1,2 @@\n-one\n-two\n three\n two\n",
        "+0 -2 lines, delete lines 1-2",
        b"three\ntwo\n",
    ),
    "edit_lines replace": (
        "edit_lines",
        {"path": "src/app.py", "operation": "replace", "start_line": 2, "content": "    return 43"},
        APP_DIFF_43,
        "+1 -1 lines, replace line 2",
        APP_43,
    ),
    "edit_lines replace with more lines": (
        "edit_lines",
        {"path": "notes.txt", "operation": "replace", "start_line": 4, "end_line": 4, "content": "2\n3\n"},
        "--- a/notes.txt\n+++ b/notes.txt\n@@ -1,4 +1,5 @@\n one\n two\n three\n-two\n+2\n+3\n",
        "+2 -1 lines, replace line 4",
        b"one\ntwo\nthree\n2\n3\n",
    ),
}


@pytest.mark.parametrize(("tool_name", "args", "diff", "counts", "written"), WRITES.values(), ids=WRITES)
def test_preview_then_approve_then_repeat(
    client: TestClient,
    local_store: LocalStore,
    tool_name: str,
    args: dict[str, Any],
    diff: str,
    counts: str,
    written: bytes,
) -> None:
    path = args["path"].replace("./", "").replace("//", "/")
    before = local_store.head("demo", path)

    preview = call(client, tool_name, args)
    assert preview["observation"] == preview_text(path, counts, diff)
    assert preview["is_error"] is False
    approval = preview["approval"]
    assert (approval["required"], approval["diff"]) == (True, diff)
    assert local_store.head("demo", path) == before  # nothing written yet

    applied = call(client, tool_name, args, approval["token"])
    assert applied["observation"] == f"Wrote {path} ({counts.split(',')[0]})."
    assert (applied["is_error"], "approval" in applied) == (False, False)
    assert local_store.get("demo", path) == written
    after = local_store.head("demo", path)

    repeated = call(client, tool_name, args, approval["token"])
    assert repeated["observation"] == f"Already applied: {path} is unchanged since this change was written."
    assert repeated["is_error"] is False
    assert local_store.head("demo", path) == after  # same etag and mtime: not written twice


# tool, args, the error observation (exact, or its start when it ends with "...")
BAD_CALLS = {
    "create existing": (
        "create_file",
        {"path": "src/app.py", "content": "x"},
        "Error: src/app.py already exists; change it with edit_file, replace_in_file or edit_lines",
    ),
    "create over a folder": (
        "create_file",
        {"path": "src/util", "content": "x"},
        "Error: src/util is a folder, not a file; name a file inside it",
    ),
    "create outside the project": (
        "create_file",
        {"path": "../other/x.py", "content": "x"},
        "Error: path '../other/x.py' must be relative to the project root, without '..'",
    ),
    "edit missing": (
        "edit_file",
        {"path": "src/nope.py", "content": "x"},
        "Error: file not found: src/nope.py; use create_file to make a new file",
    ),
    "replace in missing": (
        "replace_in_file",
        {"path": "src/nope.py", "find": "a", "replace": "b"},
        "Error: file not found: src/nope.py",
    ),
    "replace no match": (
        "replace_in_file",
        {"path": "src/app.py", "find": "return 41", "replace": "return 43"},
        "Error: no match for the text 'return 41' in src/app.py; nothing to replace. It must match "
        "exactly, whitespace and indentation included: read_file shows the current text",
    ),
    "replace regex no match": (
        "replace_in_file",
        {"path": "src/app.py", "find": "^return", "replace": "x", "regex": True},
        "Error: no match for the regex '^return' in src/app.py; nothing to replace...",
    ),
    "replace invalid regex": (
        "replace_in_file",
        {"path": "src/app.py", "find": "main(", "replace": "x", "regex": True},
        "Error: invalid regex 'main(' (missing ): main(); replace_in_file uses RE2 syntax...",
    ),
    "replace unknown group": (
        "replace_in_file",
        {"path": "src/app.py", "find": "(4)2", "replace": "\\2", "regex": True},
        "Error: replace refers to group '2', which the regex does not have; "
        "write \\\\ in replace for a literal backslash",
    ),
    "replace empty find": (
        "replace_in_file",
        {"path": "src/app.py", "find": "", "replace": "x"},
        "Error: replace_in_file: argument 'find': String should have at least 1 character",
    ),
    "lines past the end": (
        "edit_lines",
        {"path": "src/app.py", "operation": "replace", "start_line": 2, "end_line": 3, "content": "x"},
        "Error: line range 2-3 is out of range: src/app.py has 2 lines; read_file shows them",
    ),
    "insert past the end": (
        "edit_lines",
        {"path": "src/app.py", "operation": "insert", "start_line": 4, "content": "x"},
        "Error: start_line 4 is out of range: src/app.py has 2 lines; insert accepts 1 to 3 "
        "(3 appends at the end)",
    ),
    "lines reversed": (
        "edit_lines",
        {"path": "src/app.py", "operation": "delete", "start_line": 2, "end_line": 1},
        "Error: end_line (1) is before start_line (2)",
    ),
    "lines from zero": (
        "edit_lines",
        {"path": "src/app.py", "operation": "delete", "start_line": 0},
        "Error: edit_lines: argument 'start_line': Input should be greater than or equal to 1",
    ),
    "lines unknown operation": (
        "edit_lines",
        {"path": "src/app.py", "operation": "append", "start_line": 1},
        "Error: edit_lines: argument 'operation': Input should be 'insert', 'delete' or 'replace'",
    ),
    "lines of a missing file": (
        "edit_lines",
        {"path": "nope.txt", "operation": "delete", "start_line": 1},
        "Error: file not found: nope.txt; use create_file to make a new file",
    ),
    "edit a binary file": (
        "edit_file",
        {"path": "logo.png", "content": "x"},
        "Error: logo.png is not a UTF-8 text file; the write tools change text files only",
    ),
}


@pytest.mark.parametrize(("tool_name", "args", "message"), BAD_CALLS.values(), ids=BAD_CALLS)
def test_bad_calls_are_error_observations_and_write_nothing(
    client: TestClient, local_store: LocalStore, tool_name: str, args: dict[str, Any], message: str
) -> None:
    local_store.put("demo", "logo.png", b"\x89PNG\r\n\x1a\n\x00\x00")
    listing = list(local_store.list("demo"))
    result = call(client, tool_name, args)
    assert result["is_error"] is True
    assert "approval" not in result
    if message.endswith("..."):
        assert result["observation"].startswith(message[:-3]), result["observation"]
    else:
        assert result["observation"] == message
    assert list(local_store.list("demo")) == listing


def test_a_change_that_changes_nothing_needs_no_approval(client: TestClient) -> None:
    result = call(client, "edit_file", {"path": "src/app.py", "content": APP_PY.decode()})
    assert (
        result["observation"]
        == "No change: src/app.py already has this content, so there is nothing to write."
    )
    assert (result["is_error"], "approval" in result) == (False, False)


def test_content_over_the_write_limit_is_refused(
    make_client: Callable[..., TestClient], local_store: LocalStore
) -> None:
    client = make_client(file_max_bytes=10)
    result = call(client, "create_file", {"path": "big.txt", "content": "x" * 11})
    assert (
        result["observation"] == "Error: the new content of big.txt would be 11 bytes; the limit is 10 bytes"
    )
    local_store.put("demo", "big.txt", b"y" * 11)
    result = call(client, "replace_in_file", {"path": "big.txt", "find": "y", "replace": "z"})
    assert result["observation"] == "Error: big.txt is 11 bytes; the write tools change files up to 10 bytes"


REPLACE_42 = {"path": "src/app.py", "find": "42", "replace": "43"}


def preview_token(client: TestClient) -> str:
    token: str = call(client, "replace_in_file", REPLACE_42)["approval"]["token"]
    return token


def altered(token: str, part: int) -> str:
    """The token with one character of its payload (0) or MAC (1) changed."""
    pieces = token.split(".")
    text = pieces[part]
    middle = len(text) // 2
    pieces[part] = text[:middle] + ("A" if text[middle] != "A" else "B") + text[middle + 1 :]
    return ".".join(pieces)


ALTERED = f"Error: the approval_token is not one this server issued, or it was altered. {AGAIN}"
# how the approved call differs from the previewed one, and the refusal
REFUSALS: dict[str, tuple[Callable[[str], str], str, dict[str, Any], str, str]] = {
    "payload altered": (lambda t: altered(t, 0), "replace_in_file", REPLACE_42, "demo", ALTERED),
    "mac altered": (lambda t: altered(t, 1), "replace_in_file", REPLACE_42, "demo", ALTERED),
    "no mac": (lambda t: t.split(".")[0], "replace_in_file", REPLACE_42, "demo", ALTERED),
    "stray characters": (lambda t: t[:10] + "!" + t[10:], "replace_in_file", REPLACE_42, "demo", ALTERED),
    "not a token": (lambda t: "hello", "replace_in_file", REPLACE_42, "demo", ALTERED),
    "other arguments": (
        lambda t: t,
        "replace_in_file",
        {**REPLACE_42, "replace": "44"},
        "demo",
        "Error: the approval_token was issued for other arguments; it approves only the exact call "
        f"that was previewed. {AGAIN}",
    ),
    "other tool": (
        lambda t: t,
        "edit_file",
        {"path": "src/app.py", "content": "x"},
        "demo",
        f"Error: the approval_token was issued for replace_in_file, not edit_file. {AGAIN}",
    ),
    "other project": (
        lambda t: t,
        "replace_in_file",
        REPLACE_42,
        "other",
        f"Error: the approval_token was issued for another project. {AGAIN}",
    ),
}


@pytest.mark.parametrize(
    ("change", "tool_name", "args", "project", "message"), REFUSALS.values(), ids=REFUSALS
)
def test_tokens_for_anything_but_the_previewed_call_are_refused(
    client: TestClient,
    local_store: LocalStore,
    change: Callable[[str], str],
    tool_name: str,
    args: dict[str, Any],
    project: str,
    message: str,
) -> None:
    token = change(preview_token(client))
    result = call(client, tool_name, args, token, project=project)
    assert (result["observation"], result["is_error"]) == (message, True)
    assert local_store.get("demo", "src/app.py") == APP_PY


def test_an_expired_token_is_refused(make_client: Callable[..., TestClient], local_store: LocalStore) -> None:
    client = make_client(approval_secret=SECRET, approval_ttl_s=0)  # expired as soon as it is issued
    preview = call(client, "replace_in_file", REPLACE_42)
    result = call(client, "replace_in_file", REPLACE_42, preview["approval"]["token"])
    assert result["is_error"] is True
    assert result["observation"].startswith("Error: the approval_token expired at 20")
    assert result["observation"].endswith(f"Z. {AGAIN}")
    assert local_store.get("demo", "src/app.py") == APP_PY


@pytest.mark.parametrize(
    ("tool_name", "args", "meanwhile"),
    [
        ("replace_in_file", REPLACE_42, b"def main():\n    return 42  # edited\n"),
        ("edit_lines", {"path": "src/app.py", "operation": "delete", "start_line": 1}, None),
        ("create_file", {"path": "src/new.py", "content": "a = 1\n"}, b"b = 2\n"),
    ],
    ids=["edited meanwhile", "deleted meanwhile", "created meanwhile"],
)
def test_a_file_changed_since_the_preview_is_not_written(
    client: TestClient, local_store: LocalStore, tool_name: str, args: dict[str, Any], meanwhile: bytes | None
) -> None:
    path = args["path"]
    token = call(client, tool_name, args)["approval"]["token"]
    if meanwhile is None:
        local_store.delete("demo", path)
    else:
        local_store.put("demo", path, meanwhile)
    result = call(client, tool_name, args, token)
    assert result["observation"] == (
        f"Error: {path} changed since the preview, so nothing was written. Propose the change again "
        "to get a fresh preview for the user to approve."
    )
    assert result["is_error"] is True
    kept = local_store.head("demo", path) and local_store.get("demo", path)
    assert kept == meanwhile  # the other writer's content (or its deletion) stands


def test_any_replica_with_the_same_secret_accepts_the_token(
    make_client: Callable[..., TestClient], local_store: LocalStore
) -> None:
    token = preview_token(make_client(approval_secret=SECRET))
    other_replica = make_client(approval_secret=SECRET)
    assert (
        call(other_replica, "replace_in_file", REPLACE_42, token)["observation"]
        == "Wrote src/app.py (+1 -1 lines)."
    )


def test_without_a_configured_secret_tokens_do_not_cross_processes(
    make_client: Callable[..., TestClient], local_store: LocalStore, caplog: pytest.LogCaptureFixture
) -> None:
    first = make_client()
    assert "REACTSTEP_APPROVAL_SECRET is not set" in caplog.text
    result = call(make_client(), "replace_in_file", REPLACE_42, preview_token(first))
    assert (result["observation"], result["is_error"]) == (ALTERED, True)


def test_a_token_carries_no_file_content(client: TestClient) -> None:
    secret_line = "API_KEY = 'do-not-put-me-in-a-token'\n"
    token = call(client, "create_file", {"path": "conf.py", "content": secret_line})["approval"]["token"]
    payload = json.loads(base64.urlsafe_b64decode(token.split(".")[0] + "=="))
    assert sorted(payload) == [
        "args_sha256",
        "base_version",
        "expires_at",
        "project_id",
        "result_version",
        "tool_name",
    ]
    assert "do-not-put-me" not in json.dumps(payload)


def test_react_step_marks_write_actions_for_approval(
    make_client: Callable[..., TestClient], llm_server: ScriptedLLMServer
) -> None:
    client = make_client()
    body = {
        "project_id": "demo",
        "session_id": "s-w",
        "user_query": "Make main return 43.",
        "max_iterations_left": 5,
    }
    llm_server.push(
        'Thought: change it\nAction: replace_in_file(path="src/app.py", find="42", replace="43")',
        'Thought: look\nAction: read_file(file_path="src/app.py")',
    )
    write = client.post("/api/agent/react_step", json=body).json()
    assert write["action_details"] == {
        "tool_name": "replace_in_file",
        "tool_args": {"path": "src/app.py", "find": "42", "replace": "43"},
        "raw_action_string": 'Action: replace_in_file(path="src/app.py", find="42", replace="43")',
        "executor": "server",
        "requires_approval": True,
    }
    read = client.post("/api/agent/react_step", json=body).json()
    assert "requires_approval" not in read["action_details"]  # false is left out


def test_manifest_lists_the_write_tools_as_needing_approval(client: TestClient) -> None:
    manifest = client.get("/api/agent/tools").json()
    writing = [tool for tool in manifest["tools"] if tool["category"] == "writing"]
    assert [(t["name"], t["read_only"], t["requires_approval"]) for t in writing] == [
        ("create_file", False, True),
        ("edit_file", False, True),
        ("replace_in_file", False, True),
        ("edit_lines", False, True),
    ]
    segment = manifest["prompt_segment"]
    assert "## Writing (every call is shown to the user, who must approve it)" in segment
    assert segment.count("(requires approval)") == 4


def test_the_flow_over_s3(s3_server: str, tmp_path: Path) -> None:
    """Preview, approve, repeat and a stale approval against a real S3 protocol speaker (moto)."""
    fields: dict[str, Any] = {
        "data_dir": tmp_path,
        "storage_backend": "s3",
        "s3_endpoint_url": s3_server,
        "s3_bucket": f"w-{uuid.uuid4().hex[:24]}",
        "s3_access_key_id": "test",
        "s3_secret_access_key": "test",
        "s3_region": "us-east-1",
        "approval_secret": SECRET,
    }
    settings = Settings(**fields)
    store = open_store(settings)
    s3_client(settings).create_bucket(Bucket=settings.s3_bucket)
    store.put("demo", "src/app.py", APP_PY)
    client = TestClient(create_app(settings, store=store))
    token = preview_token(client)
    assert (
        call(client, "replace_in_file", REPLACE_42, token)["observation"] == "Wrote src/app.py (+1 -1 lines)."
    )
    repeated = call(client, "replace_in_file", REPLACE_42, token)["observation"]
    assert repeated == "Already applied: src/app.py is unchanged since this change was written."
    assert store.get("demo", "src/app.py") == APP_43
    token = call(client, "edit_file", {"path": "src/app.py", "content": "x = 1\n"})["approval"]["token"]
    store.put("demo", "src/app.py", b"y = 2\n")
    stale = call(client, "edit_file", {"path": "src/app.py", "content": "x = 1\n"}, token)
    assert (stale["is_error"], store.get("demo", "src/app.py")) == (True, b"y = 2\n")


class RacedStore(LocalStore):
    """A local store where another replica writes `meanwhile` just before each conditional write."""

    meanwhile = b""

    def put_if(self, project_id: str, path: str, data: bytes, expected_etag: str | None) -> ObjectInfo:
        self.put(project_id, path, self.meanwhile)
        return super().put_if(project_id, path, data, expected_etag)


@pytest.mark.parametrize(
    ("meanwhile", "observation", "is_error"),
    [
        (APP_43, "Already applied: src/app.py is unchanged since this change was written.", False),
        (b"other\n", "Error: src/app.py changed since the preview, so nothing was written. ", True),
    ],
    ids=["the same approval won on another replica", "another writer won"],
)
def test_a_conditional_write_that_loses_a_race(
    tmp_path: Path, meanwhile: bytes, observation: str, is_error: bool
) -> None:
    store = RacedStore(tmp_path / "objects")
    store.put("demo", "src/app.py", APP_PY)
    client = TestClient(create_app(Settings(data_dir=tmp_path, approval_secret=SECRET), store=store))
    token = preview_token(client)
    store.meanwhile = meanwhile
    result = call(client, "replace_in_file", REPLACE_42, token)
    assert result["observation"].startswith(observation)
    assert (result["is_error"], store.get("demo", "src/app.py")) == (is_error, meanwhile)
