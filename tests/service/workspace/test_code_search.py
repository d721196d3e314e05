"""Indexing over HTTP and code_search through execute_action, with the real model and engine."""

from collections.abc import Callable
from typing import Any

import pytest
from starlette.testclient import TestClient

from reactstep.client.traces.scripted_llm import Fault, ScriptedLLMServer
from reactstep.tools.code_search import render_results
from reactstep.tools.ranking.retrieval import Passage
from reactstep.tools.store.local import LocalStore
from tests.service.http.test_openapi import errors_of, lookup, response_pointer

AUTH = b'''def check_password(user, password):
    """Compare a password with the stored hash."""
    return hash_password(password) == user.password_hash


def hash_password(password):
    return sha256(password.encode()).hexdigest()
'''
HTTP = b"""export async function fetchJson(url) {
  const response = await fetch(url);
  return response.json();
}
"""
MATH = b"def add(a, b):\n    return a + b\n\n\ndef multiply(a, b):\n    return a * b\n"


@pytest.fixture
def client(make_client: Callable[..., TestClient], local_store: LocalStore) -> TestClient:
    local_store.put("demo", "src/auth.py", AUTH)
    local_store.put("demo", "web/api/http.js", HTTP)
    local_store.put("demo", "src/math.py", MATH)
    local_store.put("other", "src/auth.py", AUTH)
    app = make_client()
    response = app.post("/api/projects/demo/index")
    assert response.status_code == 200, response.text
    return app


def search(client: TestClient, project: str = "demo", **args: Any) -> dict[str, Any]:
    body = {"project_id": project, "session_id": "s", "tool_name": "code_search", "tool_args": args}
    response = client.post("/api/agent/execute_action", json=body)
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()
    return result


def titles(observation: str) -> list[str]:
    """'path:start-end symbol' of each numbered hit."""
    return [
        line.split(" (score")[0].split(". ", 1)[1] for line in observation.splitlines() if line[:1].isdigit()
    ]


def test_index_endpoint_reports_and_is_incremental(client: TestClient) -> None:
    keys = ("project_id", "files", "chunks", "embedded", "removed", "skipped", "incremental")
    again = client.post("/api/projects/demo/index", json={}).json()  # nothing changed since the last run
    assert {key: again[key] for key in keys} == {
        "project_id": "demo", "files": 0, "chunks": 0, "embedded": 0, "removed": 0, "skipped": 0,
        "incremental": True,
    }  # fmt: skip
    full = client.post("/api/projects/demo/index", json={"full": True}).json()
    assert {key: full[key] for key in keys if key != "chunks"} == {
        "project_id": "demo", "files": 6, "embedded": 0, "removed": 0, "skipped": 0, "incremental": False,
    }  # fmt: skip
    assert full["reused"] == full["chunks"] > 0


@pytest.mark.parametrize(
    ("args", "first"),
    [
        ({"query": "verify a user's password"}, "src/auth.py:1-3 check_password"),
        ({"query": "hash_password"}, "src/auth.py:6-7 hash_password"),
        ({"query": "fetch JSON from a URL"}, "web/api/http.js:1-4 fetchJson"),
        ({"query": "multiply two numbers"}, "src/math.py:5-6 multiply"),
        ({"query": "password", "path": "web"}, "web/api/http.js:1-4 fetchJson"),
        ({"query": "password", "language": "javascript"}, "web/api/http.js:1-4 fetchJson"),
    ],
)
def test_best_hit(client: TestClient, args: dict[str, Any], first: str) -> None:
    result = search(client, **args)
    assert result["is_error"] is False
    assert titles(result["observation"])[0] == first


def test_observation_shows_numbered_snippets(client: TestClient) -> None:
    observation = search(client, query="check_password", max_results=1)["observation"]
    lines = observation.splitlines()
    assert lines[0].startswith("Found ") and lines[0].endswith(' results for "check_password" (showing 1):')
    assert lines[2].startswith("1. src/auth.py:1-3 check_password (score ")
    assert lines[3:6] == [
        "    1 | def check_password(user, password):",
        '    2 |     """Compare a password with the stored hash."""',
        "    3 |     return hash_password(password) == user.password_hash",
    ]
    assert lines[-1].startswith("...and ") and lines[-1].endswith(" more")


def test_search_sees_only_its_project(client: TestClient) -> None:
    observation = search(client, project="other", query="password")["observation"]
    assert "project 'other' has no search index yet" in observation


def test_filters_narrow_the_results(client: TestClient) -> None:
    found = {t.split(":")[0] for t in titles(search(client, query="code", path="src")["observation"])}
    assert found == {"src/app.py", "src/auth.py", "src/math.py", "src/util/strings.py"}
    assert search(client, query="code", path="nowhere")["observation"] == 'No code found for "code".'


def test_budget_cuts_whole_hits() -> None:
    passages = [
        Passage(f"src/m{n}.py", 1, 2, f"f{n}", "python", 0.5 - n / 100, ("def f():", "    pass"))
        for n in range(4)
    ]
    assert render_results("f", passages, 9, budget=10_000).endswith("\n\n...and 5 more")
    assert render_results('{"url"}', passages, 9, budget=10_000).startswith('Found 9 results for "{"url"}"')
    cut = render_results("f", passages, 9, budget=120)
    assert cut == (
        'Found 9 results for "f" (showing 1):\n\n'
        "1. src/m0.py:1-2 f0 (score 0.500)\n    1 | def f():\n    2 |     pass\n\n...and 8 more"
    )


@pytest.mark.parametrize(
    ("found", "shown", "header"),
    [
        (1, 1, 'Found 1 result for "add" (showing 1):'),
        (9, 2, 'Found 9 results for "add" (showing 2):'),
        (
            1,
            7,
            'Found 1 result for "add" above the relevance floor, and 6 weaker ones below it (showing 7):',
        ),
        (
            0,
            1,
            'Found 0 results for "add" above the relevance floor, and 1 weaker one below it (showing 1):',
        ),
    ],
)
def test_the_header_counts_in_plain_words(found: int, shown: int, header: str) -> None:
    passages = [Passage(f"src/m{n}.py", 1, 1, f"f{n}", "python", 0.5, ("pass",)) for n in range(shown)]
    assert render_results("add", passages, found, budget=10_000).split("\n", 1)[0] == header


def test_a_page_below_the_floor_keeps_to_its_budget() -> None:
    """The header's length is reserved as it will be (it overran by its floor clause before)."""
    body = tuple(f"    value_{line} = compute({line})  # a line of some length" for line in range(40))
    passages = [Passage(f"src/m{n}.py", 1, 40, f"f{n}", "python", 0.9 - n / 100, body) for n in range(10)]
    over = [
        budget
        for budget in range(600, 3_000, 7)
        if len(render_results("compute", passages, 1, budget)) > budget
    ]
    assert over == []


def test_budget_shortens_snippets_before_it_drops_hits() -> None:
    body = tuple(f"    value_{line} = compute({line})  # a line of some length" for line in range(40))
    passages = [Passage(f"src/m{n}.py", 1, 40, f"f{n}", "python", 0.9 - n / 100, body) for n in range(10)]
    whole = render_results("compute", passages, 10, budget=100_000)
    assert whole.startswith('Found 10 results for "compute" (showing 10):\n\n')
    assert whole.count("   40 | ") == 10
    fitted = render_results("compute", passages, 10, budget=14_000)
    assert len(fitted) <= 14_000
    assert fitted.startswith('Found 10 results for "compute" (showing 10; snippets cut to 20 lines to fit):')
    assert fitted.count("   20 | ") == 10 and "   21 | " not in fitted
    assert fitted.count("... 20 more lines (read_file to see them)") == 10
    tight = render_results("compute", passages, 10, budget=1_500)
    assert len(tight) <= 1_500
    assert tight.startswith('Found 10 results for "compute" (showing 5; snippets cut to 3 lines to fit):')
    assert tight.endswith("\n\n...and 5 more")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({}, "Error: code_search: argument 'query': Field required"),
        ({"query": ""}, "Error: code_search: argument 'query': String should have at least 1 character"),
        ({"query": "x", "max_results": 101}, "Error: code_search: argument 'max_results'"),
        ({"query": "x", "path": "../other"}, "Error: path '../other' must be relative"),
    ],
)
def test_bad_arguments(client: TestClient, args: dict[str, Any], message: str) -> None:
    result = search(client, **args)
    assert result["is_error"] is True
    assert result["observation"].startswith(message), result["observation"]


def test_another_embedding_model_is_a_clear_error(client: TestClient) -> None:
    body = {
        "project_id": "demo",
        "session_id": "s",
        "tool_name": "code_search",
        "tool_args": {"query": "x"},
        "embedding_model_config": {"model": "local/other-model"},
    }
    response = client.post("/api/agent/execute_action", json=body)
    assert response.status_code == 422
    assert "unknown local embedding model 'local/other-model'" in response.json()["error"]["message"]


def test_index_refuses_a_bad_project_id(client: TestClient) -> None:
    response = client.post("/api/projects/bad$id/index")
    assert (response.status_code, response.json()["error"]["code"]) == (422, "validation_failed")


REMOTE = {"model": "openai/scripted-embedding"}


def remote_search(client: TestClient, base_url: str, **args: Any) -> Any:
    body = {
        "project_id": "remote",
        "session_id": "s",
        "tool_name": "code_search",
        "tool_args": args,
        "embedding_model_config": {**REMOTE, "api_base": base_url},
        "user_api_keys": {"embeddingKey": "sk-embedding-canary"},
    }
    return client.post("/api/agent/execute_action", json=body)


@pytest.fixture
def remote_client(
    make_client: Callable[..., TestClient], local_store: LocalStore, llm_server: ScriptedLLMServer
) -> TestClient:
    local_store.put("remote", "src/math.py", MATH)
    local_store.put("remote", "src/auth.py", AUTH)
    app = make_client(llm_api_base_allowlist=["http://127.0.0.1:*"], llm_timeout_s=1.0)
    body = {"embedding_model_config": {**REMOTE, "api_base": llm_server.base_url}}
    response = app.post("/api/projects/remote/index", json=body)
    assert response.status_code == 200, response.text
    assert response.json()["collection"] == "chunks_openai_scripted_embedding_64_w3"
    return app


def test_a_litellm_embedding_model_indexes_and_searches(
    remote_client: TestClient, llm_server: ScriptedLLMServer
) -> None:
    response = remote_search(remote_client, llm_server.base_url, query="multiply two numbers")
    assert titles(response.json()["observation"])[0] == "src/math.py:5-6 multiply"
    assert llm_server.authorizations[-1] == "Bearer sk-embedding-canary"
    local = search(remote_client, project="remote", query="multiply")["observation"]
    assert local.startswith(
        "Error: project 'remote' is indexed with another embedding model "
        "(chunks_openai_scripted_embedding_64_w3)"
    )


@pytest.mark.parametrize(
    ("fault", "status", "code"),
    [
        (Fault(status=401, message="bad key sk-embedding-canary"), 502, "llm_auth_failed"),
        (Fault(status=429), 503, "llm_rate_limited"),
        (Fault(delay_s=2.0), 504, "llm_timeout"),
    ],
)
def test_embedding_provider_faults_are_http_errors(
    remote_client: TestClient, llm_server: ScriptedLLMServer, fault: Fault, status: int, code: str
) -> None:
    # litellm's OpenAI client retries embeddings twice on 429/5xx/timeouts whatever max_retries says
    # (BerriAI/litellm#7003), so three faults in a row reach the caller.
    llm_server.push(fault, fault, fault)
    response = remote_search(remote_client, llm_server.base_url, query="multiply")
    assert (response.status_code, response.json()["error"]["code"]) == (status, code)
    assert "sk-embedding-canary" not in response.text
    pointer = response_pointer("/api/agent/execute_action", "post", status)
    assert errors_of(f"{pointer}/content/application~1json/schema", response.json()) == []
    assert code in lookup(pointer)["x-error-codes"]


@pytest.mark.parametrize(
    ("faults", "status", "code"),
    [((Fault(status=401),), 502, "llm_auth_failed"), ((Fault(delay_s=2.0),) * 3, 504, "llm_timeout")],
)
def test_index_with_a_failing_provider_is_an_http_error(
    remote_client: TestClient,
    local_store: LocalStore,
    llm_server: ScriptedLLMServer,
    faults: tuple[Fault, ...],
    status: int,
    code: str,
) -> None:
    local_store.put("remote", "src/new.py", b"def fresh():\n    pass\n")
    llm_server.push(*faults)
    body = {"embedding_model_config": {**REMOTE, "api_base": llm_server.base_url}}
    response = remote_client.post("/api/projects/remote/index", json=body)
    assert (response.status_code, response.json()["error"]["code"]) == (status, code)
    pointer = response_pointer("/api/projects/demo/index", "post", status)
    assert errors_of(f"{pointer}/content/application~1json/schema", response.json()) == []
