"""grep through execute_action: exact ripgrep-style observations over a local and an S3 store."""

import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from reactstep.service.backends import s3_client
from reactstep.service.http.app import create_app
from reactstep.service.settings import Settings
from reactstep.tools.store.local import LocalStore
from reactstep.tools.store.s3 import S3Store
from tests.timing import LOAD_SLACK_S

SKIPPED = "[Skipped 1 binary file and 1 file over 1000000 bytes]"
PROJECT = {
    "README.md": b"# Demo\n",
    "src/app.py": b"def main():\n    return 42\n",
    "src/util/strings.py": b"def shout(text):\n    return text.upper()\n",
    "notes/todo.txt": b"TODO: first\nsomething\nthen todo second\n",
    "logo.png": b"\x89PNG\x00\x00def main",
    "big.log": b"def main\n" + b"x" * 1_000_000,
    "ab.txt": b"a" * 40 + b"b\n",
}


def observe(client: TestClient, **tool_args: Any) -> tuple[str, bool]:
    """Run grep through the HTTP app; the observation and its error flag."""
    body = {"project_id": "demo", "session_id": "s-1", "tool_name": "grep", "tool_args": tool_args}
    response = client.post("/api/agent/execute_action", json=body)
    assert response.status_code == 200, response.text
    result = response.json()
    return result["observation"], result["is_error"]


def client_for(root: Path, files: dict[str, bytes]) -> TestClient:
    """An app over a local store holding `files` in project 'demo' (and a secret in 'other')."""
    store = LocalStore(root / "objects")
    for path, data in files.items():
        store.put("demo", path, data)
    store.put("other", "secret.txt", b"another tenant def\n")
    return TestClient(create_app(Settings(data_dir=root), store=store))


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> TestClient:
    """Source files, notes, a binary, an oversize log and a line for the catastrophic pattern."""
    return client_for(tmp_path_factory.mktemp("grep"), PROJECT)


@pytest.mark.parametrize(
    ("tool_args", "observation"),
    [
        pytest.param(
            {"pattern": "def"},
            f"Found 2 matches in 2 files\nsrc/app.py:1:def main():\nsrc/util/strings.py:1:def shout(text):\n"
            f"{SKIPPED}",
            id="sorted-by-path-binary-and-oversize-skipped",
        ),
        pytest.param(
            {"pattern": "todo"},
            f"Found 2 matches in 1 file\nnotes/todo.txt:1:TODO: first\nnotes/todo.txt:3:then todo second\n"
            f"{SKIPPED}",
            id="case-insensitive-by-default",
        ),
        pytest.param(
            {"pattern": "todo", "case_sensitive": True},
            f"Found 1 match in 1 file\nnotes/todo.txt:3:then todo second\n{SKIPPED}",
            id="case-sensitive",
        ),
        pytest.param(
            {"pattern": r"return \w+", "context_lines": 1},
            "Found 2 matches in 2 files\nsrc/app.py-1-def main():\nsrc/app.py:2:    return 42\n--\n"
            "src/util/strings.py-1-def shout(text):\nsrc/util/strings.py:2:    return text.upper()\n"
            f"{SKIPPED}",
            id="context-lines-and-separators",
        ),
        pytest.param(
            {"pattern": "^(todo|then)", "context_lines": 2, "path": "notes"},
            "Found 2 matches in 1 file\nnotes/todo.txt:1:TODO: first\nnotes/todo.txt-2-something\n"
            "notes/todo.txt:3:then todo second",
            id="overlapping-context-is-one-group",
        ),
        pytest.param(
            {"pattern": "def", "path": "./src//util"},
            "Found 1 match in 1 file\nsrc/util/strings.py:1:def shout(text):",
            id="path-is-a-folder",
        ),
        pytest.param(
            {"pattern": "return", "path": "src/app.py"},
            "Found 1 match in 1 file\nsrc/app.py:2:    return 42",
            id="path-is-a-file",
        ),
        pytest.param(
            {"pattern": "t", "glob": "*.txt"},
            "Found 3 matches in 1 file\nnotes/todo.txt:1:TODO: first\nnotes/todo.txt:2:something\n"
            "notes/todo.txt:3:then todo second",
            id="glob",
        ),
        pytest.param(
            {"pattern": "def", "glob": ["src/**", "!**/strings.py"]},
            "Found 1 match in 1 file\nsrc/app.py:1:def main():",
            id="glob-list-with-negation",
        ),
        pytest.param(
            {"pattern": "e", "max_results": 2, "glob": ["*.py", "*.txt"]},
            "Found 6 matches in 3 files\nnotes/todo.txt:2:something\nnotes/todo.txt:3:then todo second\n"
            "[found 6, showing 2: narrow the pattern, path or glob, or raise max_results (at most 500)]",
            id="max-results-cut",
        ),
        pytest.param(
            {"pattern": "zebra"},
            f"No matches in 5 files\n{SKIPPED}",
            id="no-matches",
        ),
        pytest.param(
            {"pattern": "(a+)+b"},
            f"Found 1 match in 1 file\nab.txt:1:{'a' * 40}b\n{SKIPPED}",
            id="nested-quantifier-matches",
        ),
    ],
)
def test_grep_observations(client: TestClient, tool_args: dict[str, Any], observation: str) -> None:
    assert observe(client, **tool_args) == (observation, False)


@pytest.mark.parametrize(
    ("tool_args", "message"),
    [
        (
            {"pattern": "(foo"},
            "Error: invalid regex '(foo' (missing ): (foo); grep uses RE2 syntax, as ripgrep does: no "
            "lookaround or backreferences; escape ( ) [ ] { } . * + ? | with a backslash to match them",
        ),
        ({"pattern": "(?<=x)y"}, "Error: invalid regex '(?<=x)y' (invalid perl operator: (?<=);"),
        ({"pattern": r"(a)\1"}, "Error: invalid regex '(a)\\\\1' (invalid escape sequence: \\1);"),
        ({"pattern": "a{1001}"}, "Error: invalid regex 'a{1001}' (invalid repetition size: {1001});"),
        ({"pattern": ""}, "Error: grep: argument 'pattern': String should have at least 1 character"),
        ({}, "Error: grep: argument 'pattern': Field required"),
        ({"pattern": "x", "regex": True}, "Error: grep: argument 'regex': Extra inputs are not permitted"),
        ({"pattern": "x", "max_results": 501}, "Error: grep: argument 'max_results': Input should be less"),
        ({"pattern": "x", "max_results": 0}, "Error: grep: argument 'max_results': Input should be greater"),
        ({"pattern": "x", "context_lines": -1}, "Error: grep: argument 'context_lines': Input should be"),
        ({"pattern": "x", "path": "../other"}, "Error: path '../other' must be relative to the project root"),
        ({"pattern": "x", "path": "/etc"}, "Error: path '/etc' is absolute"),
        ({"pattern": "x", "path": "%2e%2e/other"}, "Error: path '%2e%2e/other' must be relative"),
        ({"pattern": "x", "path": "nowhere"}, "Error: no such file or folder: nowhere"),
        ({"pattern": "x", "glob": "["}, "Error: glob '[' is not a valid pattern"),
        (
            {"pattern": "x", "glob": "*.rs", "path": "src"},
            "Error: no file in src matches the glob '*.rs'; try find_files to see the paths",
        ),
    ],
)
def test_grep_failures_are_error_observations(
    client: TestClient, tool_args: dict[str, Any], message: str
) -> None:
    observation, is_error = observe(client, **tool_args)
    assert is_error is True
    assert observation.startswith(message), observation
    assert "another tenant" not in observation


def test_catastrophic_pattern_returns_quickly(client: TestClient) -> None:
    start = time.perf_counter()
    observation = observe(client, pattern="(a+)+$", path="ab.txt")
    elapsed = time.perf_counter() - start
    # Python's re needs about 2**40 steps here; RE2 answers in microseconds.
    assert observation == ("No matches in 1 file", False)
    assert elapsed < 2.0 + LOAD_SLACK_S


def test_line_numbers_agree_with_read_file(tmp_path: Path) -> None:
    # str.splitlines, which read_file uses, also breaks at form feeds and \r.
    client = client_for(tmp_path, {"odd.py": b"a\x0cb\r\nc\rdef here():\n"})
    assert observe(client, pattern="def here", path="odd.py") == (
        "Found 1 match in 1 file\nodd.py:4:def here():",
        False,
    )
    body = {"project_id": "demo", "session_id": "s", "tool_name": "read_file"}
    body["tool_args"] = {"file_path": "odd.py", "start_line": 4}
    read = client.post("/api/agent/execute_action", json=body).json()["observation"]
    assert read == "File: odd.py (4 lines)\n    4 | def here():"


def test_long_lines_are_cut(tmp_path: Path) -> None:
    client = client_for(tmp_path, {"min.js": b"needle" + b"x" * 994 + b"\n"})
    assert observe(client, pattern="needle", path="min.js") == (
        f"Found 1 match in 1 file\nmin.js:1:needle{'x' * 294} [line cut]",
        False,
    )


def test_grep_over_s3_reads_files_in_parallel_and_keeps_path_order(s3_server: str, tmp_path: Path) -> None:
    settings = Settings(
        data_dir=tmp_path,
        storage_backend="s3",
        s3_endpoint_url=s3_server,
        s3_bucket=f"grep-{uuid.uuid4().hex[:16]}",
        s3_access_key_id="test",
        s3_secret_access_key="test",
        s3_region="us-east-1",
    )
    client = s3_client(settings)
    client.create_bucket(Bucket=settings.s3_bucket)
    store = S3Store(settings.s3_bucket, settings.s3_prefix, client)
    # More files than the pool's window (2 x 8), so results arrive across several batches.
    for number in range(40):
        store.put("demo", f"pkg/m{number:02d}.py", f"value = {number}\n".encode())
    store.put("demo", "pkg/blob.bin", b"\x00value = 7")
    client = TestClient(create_app(settings, store=store))
    assert observe(client, pattern=r"value = \d*7$") == (
        "Found 4 matches in 4 files\npkg/m07.py:1:value = 7\npkg/m17.py:1:value = 17\n"
        "pkg/m27.py:1:value = 27\npkg/m37.py:1:value = 37\n[Skipped 1 binary file]",
        False,
    )
