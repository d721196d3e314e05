"""code_search's globs and its test switch, over HTTP with the real model and engine."""

from collections.abc import Callable
from typing import Any

import pytest
from starlette.testclient import TestClient

from reactstep.tools.index.conventions import is_test_path
from reactstep.tools.store.local import LocalStore

AUTH = b'''def check_password(user, password):
    """Compare a password with the stored hash."""
    return hash_password(password) == user.password_hash
'''
AUTH_TEST = b'''from auth import check_password


def test_check_password_accepts_the_right_password():
    """check_password compares a password with the stored hash."""
    assert check_password(make_user("secret"), "secret")
'''
HTTP = b"export async function checkPassword(url, password) {\n  return fetch(url, {body: password});\n}\n"
MIGRATION = b"def check_password_column(db):\n    db.add_column('users', 'password_hash')\n"


@pytest.fixture
def client(make_client: Callable[..., TestClient], local_store: LocalStore) -> TestClient:
    for path, data in {
        "src/auth.py": AUTH,
        "tests/test_auth.py": AUTH_TEST,
        "web/api/http.js": HTTP,
        "src/migrations/m001.py": MIGRATION,
    }.items():
        local_store.put("demo", path, data)
    app = make_client()
    assert app.post("/api/projects/demo/index").status_code == 200
    return app


def files(client: TestClient, **args: Any) -> list[str]:
    body = {"project_id": "demo", "session_id": "s", "tool_name": "code_search", "tool_args": args}
    result = client.post("/api/agent/execute_action", json=body).json()
    assert result["is_error"] is False, result["observation"]
    lines = result["observation"].splitlines()
    return [line.split(". ", 1)[1].split(":")[0] for line in lines if line[:1].isdigit() and ". " in line]


def test_tests_rank_after_other_code_unless_asked(client: TestClient) -> None:
    ranked = files(client, query="compare a password with the stored hash", max_results=20)
    assert "tests/test_auth.py" in ranked
    first_test = ranked.index("tests/test_auth.py")
    assert all(is_test_path(path) for path in ranked[first_test:])  # nothing but tests after it
    assert "tests/test_auth.py" not in files(
        client, query="compare a password with the stored hash", include_tests=False, max_results=20
    )


def test_a_query_about_tests_keeps_their_rank(client: TestClient) -> None:
    about = files(client, query="the test of check_password", max_results=20)
    kept = files(client, query="the test of check_password", include_tests=True, max_results=20)
    assert about == kept


@pytest.mark.parametrize(
    ("glob", "expected"),
    [
        ("*.js", {"web/api/http.js"}),
        (["src/**", "!**/migrations/**"], {"src/auth.py", "src/app.py", "src/util/strings.py"}),
    ],
)
def test_globs_choose_files(client: TestClient, glob: str | list[str], expected: set[str]) -> None:
    found = set(files(client, query="check password", glob=glob, max_results=20))
    assert found and found <= expected


def test_a_bad_glob_is_a_tool_error(client: TestClient) -> None:
    body = {
        "project_id": "demo",
        "session_id": "s",
        "tool_name": "code_search",
        "tool_args": {"query": "x", "glob": "[unclosed"},
    }
    result = client.post("/api/agent/execute_action", json=body).json()
    assert result["is_error"] is True and "glob '[unclosed' is not a valid pattern" in result["observation"]


@pytest.mark.parametrize(
    ("path", "test"),
    [
        ("tests/test_auth.py", True),
        ("src/auth_test.go", True),
        ("web/app.spec.ts", True),
        ("pkg/__tests__/a.js", True),
        ("conftest.py", True),
        ("src/testing_utils.py", False),
        ("src/contest.py", False),
    ],
)
def test_what_a_test_file_is(path: str, test: bool) -> None:
    assert is_test_path(path) is test


def test_without_the_switch_the_test_would_rank_first(client: TestClient) -> None:
    """The case above is a real one: by score alone, the test ranks above some other code."""
    ranked = files(
        client, query="compare a password with the stored hash", include_tests=True, max_results=20
    )
    assert ranked.index("tests/test_auth.py") < len(ranked) - 1
