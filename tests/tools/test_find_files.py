"""find_files through execute_action: glob rules, negation, exclusions, limits and bad input."""

import time
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from reactstep.service.http.app import create_app
from reactstep.service.settings import Settings
from reactstep.tools.store.local import LocalStore
from tests.timing import LOAD_SLACK_S

PROJECT = [
    "README.md",
    "package.json",
    "src/app.tsx",
    "src/app.test.tsx",
    "src/util/strings.ts",
    "src/util/strings.test.ts",
    "node_modules/react/index.js",
    "docs/guide.md",
]
NOT_FOUND = (
    "No files in the project match. Patterns match the path from the project root; one without "
    "'/' matches a name at any depth, e.g. '*.py' or '**/models/*.py'."
)


def observe(client: TestClient, **tool_args: Any) -> tuple[str, bool]:
    """Run find_files through the HTTP app; the observation and its error flag."""
    body = {"project_id": "demo", "session_id": "s-1", "tool_name": "find_files", "tool_args": tool_args}
    response = client.post("/api/agent/execute_action", json=body)
    assert response.status_code == 200, response.text
    result = response.json()
    return result["observation"], result["is_error"]


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> TestClient:
    """A small TypeScript project with tests, docs and a node_modules folder."""
    root: Path = tmp_path_factory.mktemp("find")
    store = LocalStore(root / "objects")
    for path in PROJECT:
        store.put("demo", path, b"x\n")
    store.put("other", "src/secret.tsx", b"another tenant\n")
    return TestClient(create_app(Settings(data_dir=root), store=store))


def found(*paths: str) -> str:
    """The observation listing `paths`."""
    return "\n".join([f"Found {len(paths)} {'file' if len(paths) == 1 else 'files'}:", *paths])


@pytest.mark.parametrize(
    ("tool_args", "observation"),
    [
        pytest.param({"pattern": "**/*.tsx"}, found("src/app.test.tsx", "src/app.tsx"), id="double-star"),
        pytest.param({"pattern": "*.md"}, found("README.md", "docs/guide.md"), id="no-slash-any-depth"),
        pytest.param({"pattern": "/*.md"}, found("README.md"), id="leading-slash-anchors"),
        pytest.param({"pattern": "src/*.tsx"}, found("src/app.test.tsx", "src/app.tsx"), id="star-one-level"),
        pytest.param({"pattern": "src/*.ts"}, NOT_FOUND, id="star-does-not-cross-folders"),
        pytest.param(
            {"pattern": "src/**/*.test.*"},
            found("src/app.test.tsx", "src/util/strings.test.ts"),
            id="double-star-zero-or-more-folders",
        ),
        pytest.param({"pattern": "strings.t?"}, found("src/util/strings.ts"), id="question-mark"),
        pytest.param({"pattern": "[pR]*"}, found("README.md", "package.json"), id="character-class"),
        pytest.param(
            {"pattern": "util"},
            found("src/util/strings.test.ts", "src/util/strings.ts"),
            id="folder-name-matches-its-files",
        ),
        pytest.param(
            {"pattern": "*.{ts,tsx}"},
            found("src/app.test.tsx", "src/app.tsx", "src/util/strings.test.ts", "src/util/strings.ts"),
            id="braces",
        ),
        pytest.param(
            {"pattern": ["*.ts", "*.tsx", "!*.test.*"]},
            found("src/app.tsx", "src/util/strings.ts"),
            id="list-with-negation",
        ),
        pytest.param(
            {"pattern": "!*.{ts,tsx,md}"},
            found("node_modules/react/index.js", "package.json"),
            id="only-negations-mean-everything-except",
        ),
        pytest.param(
            {"pattern": "**/*.js*", "exclude": ["node_modules"]},
            found("package.json"),
            id="exclude-folder",
        ),
        pytest.param(
            {"pattern": "**", "exclude": "src"},
            found("README.md", "docs/guide.md", "node_modules/react/index.js", "package.json"),
            id="exclude-as-string",
        ),
        pytest.param(
            {"pattern": "*.ts*", "exclude": ["*.test.*", "!strings.test.ts"]},
            found("src/app.tsx", "src/util/strings.test.ts", "src/util/strings.ts"),
            id="negated-exclusion",
        ),
        pytest.param(
            {"pattern": "*.ts", "path": "./src/util/"},
            found("src/util/strings.test.ts", "src/util/strings.ts"),
            id="path",
        ),
        pytest.param(
            {"pattern": "*.md", "path": "src"},
            NOT_FOUND.replace("in the project", "under src/"),
            id="nothing-under-path",
        ),
        pytest.param(
            {"pattern": "**/*.ts*", "max_results": 2},
            found("src/app.test.tsx", "src/app.tsx").replace("Found 2 files", "Found 4 files")
            + "\n...and 2 more; narrow the pattern or path, or raise max_results (at most 500)",
            id="max-results",
        ),
    ],
)
def test_find_files(client: TestClient, tool_args: dict[str, Any], observation: str) -> None:
    assert observe(client, **tool_args) == (observation, False)


@pytest.mark.parametrize(
    ("tool_args", "message"),
    [
        ({"pattern": "["}, "Error: glob '[' is not a valid pattern (an unclosed '[', or nothing to match)"),
        ({"pattern": "!"}, "Error: invalid glob pattern: Invalid git pattern: '!'"),
        (
            {"pattern": "#x"},
            "Error: glob '#x' starts with '#', which makes it a comment; write '\\#' instead",
        ),
        ({"pattern": ""}, "Error: pattern is empty; give a glob such as '**/*.py', or '**' for every file"),
        ({"pattern": []}, "Error: pattern is empty; give a glob such as '**/*.py', or '**' for every file"),
        ({"pattern": ["*.ts", " "]}, "Error: glob pattern is empty; use '**' for every file"),
        ({"pattern": "*", "exclude": ["["]}, "Error: glob '[' is not a valid pattern"),
        ({"pattern": "x" * 1025}, "Error: glob pattern is longer than 1024 characters"),
        ({"pattern": ["*"] * 51}, "Error: too many glob patterns (51); give at most 50"),
        ({"pattern": "{a,b}{c,d}{e,f}{g,h}{i,j}{k,l}"}, "Error: the globs expand to more than 50 patterns"),
        ({}, "Error: find_files: argument 'pattern': Field required"),
        ({"pattern": 7}, "Error: find_files: argument 'pattern.str': Input should be a valid string"),
        ({"pattern": "*", "name": "x"}, "Error: find_files: argument 'name': Extra inputs are not permitted"),
        ({"pattern": "*", "max_results": 0}, "Error: find_files: argument 'max_results': Input should be"),
        ({"pattern": "*", "max_results": 501}, "Error: find_files: argument 'max_results': Input should be"),
        ({"pattern": "*", "path": "../other"}, "Error: path '../other' must be relative to the project root"),
        ({"pattern": "*", "path": "src\\util"}, "Error: path contains a backslash"),
        ({"pattern": "*", "path": "nowhere"}, "Error: no such folder: nowhere"),
        ({"pattern": "*", "path": "README.md"}, "Error: README.md is a file, not a folder"),
    ],
)
def test_bad_input(client: TestClient, tool_args: dict[str, Any], message: str) -> None:
    observation, is_error = observe(client, **tool_args)
    assert (observation[: len(message)], is_error) == (message, True)


def test_globs_that_would_backtrack_in_python_re_match_quickly(tmp_path: Path) -> None:
    store = LocalStore(tmp_path / "objects")
    store.put("demo", "a" * 60 + ".txt", b"x\n")
    client = TestClient(create_app(Settings(data_dir=tmp_path), store=store))
    start = time.perf_counter()
    # As a Python regex this glob backtracks through ~C(60, 20) splits of the name; RE2 is linear.
    observation = observe(client, pattern=["*a" * 20 + "*b", "*a" * 20 + ".txt"])
    assert (observation, time.perf_counter() - start < 2.0 + LOAD_SLACK_S) == (
        (found("a" * 60 + ".txt"), False),
        True,
    )
