"""execute_action through the HTTP app: read_file and list_files over a real store."""

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from reactstep.service.http.app import create_app
from reactstep.service.settings import Settings
from reactstep.tools.registry import ToolLimits
from reactstep.tools.store.local import LocalStore

LIMITS = ToolLimits()  # the tools' own limits, as the server uses them

ALL_TOOLS = (
    "code_search, create_file, edit_file, edit_lines, find_definition, find_files, find_importers, grep, "
    "list_files, project_overview, read_file, replace_in_file"
)


def run(client: TestClient, tool_name: str, **tool_args: Any) -> dict[str, Any]:
    body = {
        "project_id": "demo",
        "session_id": "s-9",
        "tool_name": tool_name,
        "tool_args": tool_args,
    }
    response = client.post("/api/agent/execute_action", json=body)
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()
    assert (result["session_id"], result["tool_name"]) == ("s-9", tool_name)
    assert result["execution_time_ms"] >= 0
    return result


@pytest.mark.parametrize(
    ("tool_name", "tool_args", "observation"),
    [
        (
            "read_file",
            {"file_path": "src/app.py"},
            "File: src/app.py (2 lines)\n    1 | def main():\n    2 |     return 42",
        ),
        (
            "read_file",
            {"file_path": "./src//app.py", "start_line": 2},
            "File: src/app.py (2 lines)\n    2 |     return 42",
        ),
        (
            "read_file",
            {"file_path": "src/app.py", "start_line": 1, "end_line": 1},
            "File: src/app.py (2 lines)\n    1 | def main():",
        ),
        (
            "list_files",
            {},
            "Contents of ./ (2 entries):\nsrc/\nREADME.md  (7 bytes)",
        ),
        (
            "list_files",
            {"path": "src", "recursive": True},
            "Contents of src/ (2 entries):\nsrc/app.py  (26 bytes)\nsrc/util/strings.py  (41 bytes)",
        ),
        (
            "list_files",
            {"path": "src"},
            "Contents of src/ (2 entries):\nsrc/util/\nsrc/app.py  (26 bytes)",
        ),
    ],
)
def test_tool_observations(
    make_client: Callable[..., TestClient],
    tool_name: str,
    tool_args: dict[str, Any],
    observation: str,
) -> None:
    result = run(make_client(), tool_name, **tool_args)
    assert result == result | {"observation": observation, "is_error": False}


@pytest.mark.parametrize(
    ("tool_name", "tool_args", "message"),
    [
        ("read_file", {"file_path": "missing.py"}, "Error: file not found: missing.py"),
        ("read_file", {"file_path": "src"}, "Error: src is a directory"),
        ("read_file", {"file_path": "../other/secret.txt"}, "Error: path '../other/secret.txt'"),
        ("read_file", {"file_path": "/etc/passwd"}, "Error: path '/etc/passwd' is absolute"),
        ("read_file", {"file_path": "%2e%2e/other/secret.txt"}, "Error: path '%2e%2e/other"),
        ("read_file", {"file_path": "src\\app.py"}, "Error: path contains a backslash"),
        ("read_file", {"file_path": "src/app.py\x00"}, "Error: path contains a NUL"),
        ("read_file", {"file_path": "src/app.py", "start_line": 9}, "Error: start_line 9 is past"),
        ("read_file", {"file_path": "src/app.py", "start_line": 0}, "Error: read_file: argument"),
        (
            "read_file",
            {"path": "src/app.py"},
            "Error: read_file: argument 'file_path': Field required",
        ),
        ("read_file", {"file_path": 7}, "Error: read_file: argument 'file_path': Input should be"),
        ("list_files", {"path": "nowhere"}, "Error: no such folder: nowhere"),
        ("list_files", {"path": "README.md"}, "Error: README.md is a file, not a folder"),
        (
            "code_golf",
            {},
            "Error: unknown tool 'code_golf'. Available tools: " + ALL_TOOLS,
        ),
    ],
)
def test_tool_failures_are_error_observations(
    make_client: Callable[..., TestClient],
    tool_name: str,
    tool_args: dict[str, Any],
    message: str,
) -> None:
    result = run(make_client(), tool_name, **tool_args)
    assert result["is_error"] is True
    assert result["observation"].startswith(message), result["observation"]
    assert "another tenant" not in result["observation"]


def test_read_file_cuts_at_the_line_limit_and_says_how_to_go_on(
    tmp_path: Path, local_store: LocalStore
) -> None:
    lines = LIMITS.read_file_max_lines + 10
    local_store.put("demo", "long.txt", "".join(f"line {n}\n" for n in range(1, lines + 1)).encode())
    client = TestClient(create_app(Settings(data_dir=tmp_path), store=local_store))
    result = run(client, "read_file", file_path="long.txt", start_line=4)
    last = 3 + LIMITS.read_file_max_lines
    shown = "".join(f"{n:5d} | line {n}\n" for n in range(4, last + 1))
    assert result["observation"] == (
        f"File: long.txt ({lines} lines)\n{shown}[Showing lines 4-{last} of {lines}. "
        f'To read on, call read_file(file_path="long.txt", start_line={last + 1})]'
    )


def test_read_file_cuts_at_the_byte_limit(tmp_path: Path, local_store: LocalStore) -> None:
    wide = LIMITS.read_file_max_bytes * 3 // 4
    local_store.put("demo", "wide.txt", b"a" * wide + b"\n" + b"b" * wide + b"\n" + b"c\n")
    client = TestClient(create_app(Settings(data_dir=tmp_path), store=local_store))
    result = run(client, "read_file", file_path="wide.txt")
    assert result["observation"].splitlines()[1:] == [
        "    1 | " + "a" * wide,
        '[Showing lines 1-1 of 3. To read on, call read_file(file_path="wide.txt", start_line=2)]',
    ]


def test_read_file_refuses_binary(make_client: Callable[..., TestClient], local_store: LocalStore) -> None:
    local_store.put("demo", "logo.png", b"\x89PNG\r\n\x1a\n\x00\x00")
    result = run(make_client(), "read_file", file_path="logo.png")
    assert result["observation"] == "Error: logo.png is a binary file (10 bytes) and cannot be shown"


def test_list_files_caps_entries(tmp_path: Path, local_store: LocalStore) -> None:
    count, cap, page = (
        LIMITS.list_files_max_entries + 3,
        LIMITS.list_files_max_entries,
        LIMITS.list_files_page_size,
    )
    folder = tmp_path / "objects" / "demo" / "many"  # written directly: a thousand fsyncing puts are slow
    folder.mkdir(parents=True)
    for n in range(count):
        (folder / f"f{n:04d}.txt").write_bytes(b"x")
    client = TestClient(create_app(Settings(data_dir=tmp_path), store=local_store))
    pages = cap // page
    result = run(client, "list_files", path="many", page=pages)
    shown = [f"many/f{n:04d}.txt  (1 bytes)" for n in range(cap - page, cap)]
    assert result["observation"].splitlines() == [
        f"Contents of many/ ({count} entries; page {pages} of {pages}):",
        *shown,
        "...and 3 more",
    ]


def test_project_id_is_validated_before_any_io(make_client: Callable[..., TestClient]) -> None:
    body = {"project_id": "../other", "session_id": "s", "tool_name": "read_file", "tool_args": {}}
    response = make_client().post("/api/agent/execute_action", json=body)
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "validation_failed"
