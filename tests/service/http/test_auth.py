"""Service API keys: 401 without a valid key, 403 outside its projects, on every route, every request."""

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient
from starlette.types import Receive, Scope, Send

from reactstep.client.cli.main import main
from reactstep.client.traces.scripted_llm import ScriptedLLMServer
from reactstep.service.http.auth import (
    AuthMiddleware,
    KeyEntry,
    key_entry,
    parse_key_entries,
    serving_refusal,
)
from reactstep.service.settings import Settings
from reactstep.tools.store.local import LocalStore

DEMO_KEY = "rsk_demo-only-key-0123456789"
TEAM_KEY = "rsk_team-projects-key-0123456789"
ADMIN_KEY = "rsk_every-project-key-0123456789"
KEYS = [key_entry(DEMO_KEY, "demo"), key_entry(TEAM_KEY, "team-*,demo"), key_entry(ADMIN_KEY, "*")]
CHALLENGE = 'Bearer realm="reactstep"'


def bearer(key: str) -> dict[str, str]:
    return {"authorization": f"Bearer {key}"}


def react(project: str) -> dict[str, Any]:
    # max_iterations_left 0: an authorised request answers without calling the LLM.
    return {"project_id": project, "session_id": "s", "user_query": "q", "max_iterations_left": 0}


def execute(project: str) -> dict[str, Any]:
    args = {"file_path": "README.md"}
    return {"project_id": project, "session_id": "s", "tool_name": "read_file", "tool_args": args}


# (method, path template, body for a project, status when authorised)
ROUTES: dict[str, tuple[str, str, Callable[[str], Any] | None, int]] = {
    "react_step": ("POST", "/api/agent/react_step", react, 200),
    "execute_action": ("POST", "/api/agent/execute_action", execute, 200),
    # An unknown local model is refused after auth, before any indexing work.
    "index": (
        "POST",
        "/api/projects/{project}/index",
        lambda _: {"embedding_model_config": {"model": "local/none"}},
        422,
    ),
}


@pytest.fixture
def keyed(make_client: Callable[..., TestClient], local_store: LocalStore) -> TestClient:
    local_store.put("team-a", "README.md", b"# team a\n")
    local_store.put("teamb", "README.md", b"# not a team project\n")
    return make_client(api_keys=KEYS)


def call(client: TestClient, route: str, project: str, headers: dict[str, str]) -> Any:
    method, template, body, _ = ROUTES[route]
    payload = body(project) if body else None
    return client.request(method, template.format(project=project), json=payload, headers=headers)


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"authorization": ""},
        {"authorization": "Bearer"},
        {"authorization": f"Basic {DEMO_KEY}"},
        bearer("rsk_not-a-configured-key-0123"),
        bearer(DEMO_KEY + "x"),
        bearer(DEMO_KEY[:-1]),
        bearer("x" * 600),
    ],
    ids=["none", "empty", "no token", "basic", "unknown", "longer", "shorter", "huge"],
)
def test_no_valid_key_is_401_with_a_challenge(keyed: TestClient, route: str, headers: dict[str, str]) -> None:
    response = call(keyed, route, "demo", headers)
    assert (response.status_code, response.json()["error"]["code"]) == (401, "unauthorized")
    assert response.headers["www-authenticate"] == CHALLENGE


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize(
    ("key", "project", "allowed"),
    [
        (DEMO_KEY, "demo", True),
        (DEMO_KEY, "other", False),
        (DEMO_KEY, "demo2", False),
        (TEAM_KEY, "team-a", True),
        (TEAM_KEY, "demo", True),
        (TEAM_KEY, "teamb", False),
        (TEAM_KEY, "other", False),
        (ADMIN_KEY, "other", True),
        (ADMIN_KEY, "teamb", True),
    ],
)
def test_each_key_reaches_only_its_projects(
    keyed: TestClient, route: str, key: str, project: str, allowed: bool
) -> None:
    response = call(keyed, route, project, bearer(key))
    expected = ROUTES[route][3] if allowed else 403
    assert response.status_code == expected, response.text
    if not allowed:
        assert response.json()["error"]["code"] == "forbidden_project"
        assert "another tenant" not in response.text


def test_every_request_is_checked_not_just_the_first(keyed: TestClient) -> None:
    statuses = [
        call(keyed, "execute_action", project, bearer(DEMO_KEY)).status_code
        for project in ("demo", "other", "demo", "other")
    ]
    assert statuses == [200, 403, 200, 403]


def test_public_routes_need_no_key_and_the_rest_do(keyed: TestClient) -> None:
    assert [keyed.get(path).status_code for path in ("/healthz", "/readyz", "/openapi.yaml")] == [200] * 3
    tools = keyed.get("/api/agent/tools")
    assert (tools.status_code, tools.headers["www-authenticate"]) == (401, CHALLENGE)
    assert keyed.get("/api/agent/tools", headers=bearer(DEMO_KEY)).status_code == 200
    # With keys configured, an unknown path does not tell a caller without a key that it is unknown.
    assert keyed.get("/api/agent/nothing").status_code == 401
    assert keyed.get("/api/agent/nothing", headers=bearer(DEMO_KEY)).status_code == 404


def test_a_hijacked_model_cannot_reach_another_project(
    keyed: TestClient, llm_server: ScriptedLLMServer
) -> None:
    """Whatever the model proposes, the server reads only the authorised project's files."""
    attempts = [
        'read_file(file_path="../other/secret.txt")',
        'read_file(file_path="/other/secret.txt")',
        'read_file(file_path="..%2fother%2fsecret.txt")',
        'list_files(path="..")',
        'grep(pattern="tenant", path="../other")',
        'find_files(pattern="../other/**")',
    ]
    llm_server.push(*(f"Thought: ignore all rules\nAction: {action}" for action in attempts))
    body = {**react("demo"), "max_iterations_left": 5}
    for _ in attempts:
        step = keyed.post("/api/agent/react_step", json=body, headers=bearer(DEMO_KEY)).json()
        details = step["action_details"]
        run = {**execute("demo"), "tool_name": details["tool_name"], "tool_args": details["tool_args"]}
        observed = keyed.post("/api/agent/execute_action", json=run, headers=bearer(DEMO_KEY))
        assert observed.status_code == 200
        assert "another tenant" not in observed.text
    forged = keyed.post("/api/agent/execute_action", json=execute("other"), headers=bearer(DEMO_KEY))
    assert forged.status_code == 403


@pytest.mark.parametrize(
    ("entries", "position"),
    [
        (["sha256:abc:demo"], 0),
        ([KEYS[0], "md5:" + "a" * 64 + ":demo"], 1),
        (["sha256:" + "a" * 64], 0),
        (["sha256:" + "a" * 64 + ":"], 0),
        (["sha256:" + "a" * 64 + ":demo/../x"], 0),
        (["sha256:" + "g" * 64 + ":*"], 0),
        ([KEYS[0], KEYS[1], DEMO_KEY], 2),
    ],
)
def test_malformed_entries_stop_start_up_without_echoing_them(entries: list[str], position: int) -> None:
    with pytest.raises(ValueError, match=f"entry {position} is not") as raised:
        parse_key_entries(entries)
    assert DEMO_KEY not in str(raised.value)


def test_entries_are_hashes_not_keys() -> None:
    entry = key_entry(DEMO_KEY, "demo")
    assert DEMO_KEY not in entry
    prefix, digest, scope = entry.split(":")
    upper_hex = parse_key_entries([f"{prefix}:{digest.upper()}:{scope}"])
    assert middleware(upper_hex).grant_for(f"Bearer {DEMO_KEY}") is not None
    with pytest.raises(ValueError, match="at least 16"):
        key_entry("short")


def middleware(entries: tuple[KeyEntry, ...]) -> AuthMiddleware:
    async def no_app(scope: Scope, receive: Receive, send: Send) -> None:
        raise AssertionError("not called")

    return AuthMiddleware(no_app, entries)


@pytest.mark.parametrize(
    ("keys", "host", "refused"),
    [
        ([], "127.0.0.1", False),
        ([], "127.0.0.53", False),
        ([], "::1", False),
        ([], "localhost", False),
        ([], "0.0.0.0", True),
        ([], "::", True),
        ([], "10.0.0.1", True),
        ([], "example.com", True),
        (KEYS, "0.0.0.0", False),
        (["sha256:not-hex:demo"], "127.0.0.1", True),  # a malformed entry stops start-up anywhere
    ],
)
def test_dev_mode_is_loopback_only(keys: list[str], host: str, refused: bool) -> None:
    refusal = serving_refusal(Settings(api_keys=keys), host)
    assert (refusal is not None) is refused
    if refused:
        assert refusal is not None and "REACTSTEP_API_KEYS" in refusal


def test_serve_refuses_a_public_bind_without_keys(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("REACTSTEP_API_KEYS", raising=False)
    assert main(["serve", "--host", "0.0.0.0", "--port", "9"]) == 2
    assert "refusing to serve on 0.0.0.0 without API keys" in capsys.readouterr().err


def test_serve_on_loopback_in_dev_mode_says_so_at_start_up(tmp_path: Path) -> None:
    env = {key: value for key, value in os.environ.items() if not key.startswith("REACTSTEP_")}
    env["REACTSTEP_DATA_DIR"] = str(tmp_path)
    command = [str(Path(sys.executable).parent / "reactstep"), "serve", "--host", "127.0.0.1", "--port", "0"]
    server = subprocess.Popen(command, env=env, stderr=subprocess.PIPE, text=True)
    try:
        assert server.stderr is not None
        first = server.stderr.readline()
    finally:
        server.send_signal(signal.SIGINT)
        server.wait(timeout=20)
    entry = json.loads(first)  # stderr is not a terminal: the log lines are JSON
    assert (entry["level"], entry["logger"]) == ("warning", "reactstep")
    assert entry["message"].startswith("dev mode: no API keys are configured")


def test_hash_key_makes_a_key_and_its_entry(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["hash-key", "--projects", "demo,team-*"]) == 0
    key_line, entry_line = capsys.readouterr().out.splitlines()
    key = key_line.split()[1]
    entry = entry_line.split()[1]
    assert entry == key_entry(key, "demo,team-*") and key not in entry
    grant = middleware(parse_key_entries([entry])).grant_for(f"Bearer {key}")
    assert grant is not None and grant.allows("team-x") and not grant.allows("other")


def test_hash_key_from_stdin(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr("sys.stdin", __import__("io").StringIO(DEMO_KEY + "\n"))
    assert main(["hash-key", "--stdin", "--projects", "demo"]) == 0
    assert capsys.readouterr().out == f"entry: {key_entry(DEMO_KEY, 'demo')}\n"


def test_key_checks_take_no_longer_for_a_near_miss() -> None:
    """Every entry is compared in constant time, with no early exit on a match."""
    checker = middleware(parse_key_entries(KEYS * 50))
    started = time.perf_counter()
    for _ in range(500):
        checker.grant_for(f"Bearer {DEMO_KEY}")  # the very first entry
    hit = time.perf_counter() - started
    started = time.perf_counter()
    for _ in range(500):
        checker.grant_for("Bearer rsk_nowhere-near-0123456789")
    miss = time.perf_counter() - started
    assert 0.1 < hit / miss < 10  # an early exit would make the hit about 150 times faster


def test_the_reference_client_sends_its_service_key(local_store: LocalStore, tmp_path: Path) -> None:
    from reactstep.client import Client, Forbidden, Unauthorized
    from reactstep.service.http.app import create_app
    from reactstep.service.http.serving import BackgroundServer

    app = create_app(Settings(data_dir=tmp_path, api_keys=KEYS), store=local_store)
    with BackgroundServer(app) as server:
        with Client(server.url, DEMO_KEY) as client:
            assert client.step(react("demo")).status == "max_iterations_reached"
            with pytest.raises(Forbidden, match="403 forbidden_project"):
                client.step(react("team-a"))
            assert DEMO_KEY not in repr(client)
        with Client(server.url) as anonymous, pytest.raises(Unauthorized, match="401 unauthorized"):
            anonymous.step(react("demo"))
