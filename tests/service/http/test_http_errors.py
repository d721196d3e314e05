"""Broken requests get a 4xx JSON error with a stable code; never a bare 500."""

import json
from collections.abc import Callable, Iterator

import pytest
from starlette.testclient import TestClient

from reactstep.contract.history import MAX_HISTORY_ITEMS

VALID = {"project_id": "demo", "session_id": "s", "user_query": "q", "max_iterations_left": 0}


@pytest.mark.parametrize(
    ("content", "status", "code"),
    [
        (b"", 400, "invalid_json"),
        (b"{not json", 400, "invalid_json"),
        (b"[" * 100_000 + b"]" * 100_000, 413, "payload_too_large"),
        (b"[" * 5_000 + b"]" * 5_000, 400, "json_too_deep"),
        (b"[]", 422, "validation_failed"),
        (json.dumps({**VALID, "project_id": 5}).encode(), 422, "validation_failed"),
        (json.dumps({"session_id": "s"}).encode(), 422, "validation_failed"),
        (json.dumps({**VALID, "max_iterations_left": -1}).encode(), 422, "validation_failed"),
        (json.dumps({**VALID, "llm_config": {"top_k": 3}}).encode(), 422, "validation_failed"),
        (json.dumps({**VALID, "surprise": 1}).encode(), 422, "validation_failed"),
        (
            json.dumps({**VALID, "conversation_history": [{"x": 1}]}).encode(),
            422,
            "validation_failed",
        ),
        (json.dumps({**VALID, "user_query": "x" * 20_001}).encode(), 422, "validation_failed"),
    ],
)
def test_bad_bodies(make_client: Callable[..., TestClient], content: bytes, status: int, code: str) -> None:
    response = make_client(max_body_bytes=100_000).post(
        "/api/agent/react_step", content=content, headers={"content-type": "application/json"}
    )
    assert (response.status_code, response.json()["error"]["code"]) == (status, code)
    assert response.json()["error"]["message"]


def test_validation_errors_name_fields_not_values(make_client: Callable[..., TestClient]) -> None:
    body = {**VALID, "user_api_keys": {"llmKey": "sk-secret-value", "other": "sk-secret-value"}}
    response = make_client().post("/api/agent/react_step", json=body)
    assert response.status_code == 422
    assert response.json()["error"]["details"] == [
        {"field": "user_api_keys.other", "message": "Extra inputs are not permitted"}
    ]
    assert "sk-secret-value" not in response.text


def test_chunked_body_over_the_limit_is_refused(make_client: Callable[..., TestClient]) -> None:
    def chunks() -> Iterator[bytes]:
        yield b'{"user_query": "'
        for _ in range(50):
            yield b"x" * 1_000
        yield b'"}'

    response = make_client(max_body_bytes=10_000).post("/api/agent/react_step", content=chunks())
    assert (response.status_code, response.json()["error"]["code"]) == (413, "payload_too_large")


def test_history_longer_than_the_limit_is_refused(make_client: Callable[..., TestClient]) -> None:
    turns = [{"role": "user", "content": "hi"}] * (MAX_HISTORY_ITEMS + 1)
    body = {**VALID, "max_iterations_left": 2, "conversation_history": turns}
    response = make_client().post("/api/agent/react_step", json=body)
    assert (response.status_code, response.json()["error"]["code"]) == (422, "history_too_long")


@pytest.mark.parametrize(
    ("method", "path", "status", "code"),
    [
        ("GET", "/api/agent/nothing", 404, "not_found"),
        ("GET", "/api/agent/react_step", 405, "method_not_allowed"),
        ("DELETE", "/healthz", 405, "method_not_allowed"),
    ],
)
def test_unknown_routes(
    make_client: Callable[..., TestClient], method: str, path: str, status: int, code: str
) -> None:
    response = make_client().request(method, path)
    assert (response.status_code, response.json()["error"]["code"]) == (status, code)


def test_health_and_tools(make_client: Callable[..., TestClient]) -> None:
    client = make_client()
    assert client.get("/healthz").json() == {"status": "ok"}
    ready = {"status": "ready", "checks": {"storage": "ok", "llm": "ok"}}  # llm: the scripted server
    assert client.get("/readyz").json() == ready
    tools = client.get("/api/agent/tools").json()
    names = [tool["name"] for tool in tools["tools"]]
    assert names == [
        "code_search",
        "grep",
        "find_files",
        "find_definition",
        "find_importers",
        "project_overview",
        "list_files",
        "read_file",
        "create_file",
        "edit_file",
        "replace_in_file",
        "edit_lines",
    ]
    assert tools["tools"][7]["parameters"]["required"] == ["file_path"]
    assert tools["prompt_segment"].startswith("You have access to the following tools:")


STEP_WITHOUT_OBSERVATION = {
    "thought": "t",
    "action_details": {"tool_name": "read_file", "tool_args": {}, "raw_action_string": "read_file()"},
    "is_error": False,
}
KINDS = (
    "a history item is an object with action_details (a completed step), raw_output (a format error) "
    "or role (a turn)"
)


@pytest.mark.parametrize(
    ("item", "field", "message"),
    [
        (STEP_WITHOUT_OBSERVATION, "conversation_history.0.step.observation", "Field required"),
        ({"raw_output": "r"}, "conversation_history.0.format_error.format_error", "Field required"),
        ({"role": "user"}, "conversation_history.0.turn.content", "Field required"),
        ({"x": 1}, "conversation_history.0", KINDS),
    ],
)
def test_a_bad_history_item_is_one_detail_of_its_own_kind(
    make_client: Callable[..., TestClient], item: dict[str, object], field: str, message: str
) -> None:
    """Checked against the kind its key names, not against every kind of the union (13 details)."""
    response = make_client().post("/api/agent/react_step", json={**VALID, "conversation_history": [item]})
    assert (response.status_code, response.json()["error"]) == (
        422,
        {
            "code": "validation_failed",
            "message": f"the request body does not match the schema: {field}: {message}",
            "details": [{"field": field, "message": message}],
            "request_id": response.headers["x-request-id"],
        },
    )


def test_many_problems_are_counted_and_the_first_named(make_client: Callable[..., TestClient]) -> None:
    history = [STEP_WITHOUT_OBSERVATION] * 7
    response = make_client().post("/api/agent/react_step", json={**VALID, "conversation_history": history})
    named = "; ".join(f"conversation_history.{n}.step.observation: Field required" for n in range(5))
    assert response.json()["error"]["message"] == (
        f"the request body does not match the schema (the first 5 of 7 problems): {named}"
    )
    assert len(response.json()["error"]["details"]) == 5
