"""react_step as Server-Sent Events, driven through litellm's streaming against the scripted server."""

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.testclient import TestClient

from reactstep.client.traces.scripted_llm import Fault, Reply, ScriptedLLMServer, StreamRecord, ToolCall
from reactstep.service.http.app import create_app
from reactstep.service.http.serving import BackgroundServer
from reactstep.service.settings import Settings
from reactstep.tools.store.local import LocalStore
from tests.service.step.test_react_step import step_body

REACT = "/api/agent/react_step"
TEXT_REPLY = 'Thought: I should read\nthe app first.\nAction: read_file(file_path="src/app.py")'
Event = tuple[str, dict[str, Any]]


def parse_events(text: str) -> list[Event]:
    """(name, data) of each event in an SSE body."""
    events = []
    for block in text.split("\n\n"):
        if block.strip():
            lines = dict(line.split(": ", 1) for line in block.splitlines())
            events.append((lines["event"], json.loads(lines["data"])))
    return events


REQUEST_ID = "stream-1"


def stream(client: TestClient, **body: Any) -> list[Event]:
    response = client.post(REACT, json=step_body(stream=True, **body), headers={"x-request-id": REQUEST_ID})
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/event-stream; charset=utf-8"
    return parse_events(response.text)


def without_timing(body: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in body.items() if key != "timing"}


@pytest.mark.parametrize("chunk_chars", [1, 7, 1000])
@pytest.mark.parametrize(
    ("reply", "llm_config"),
    [
        (Reply(TEXT_REPLY), {}),
        (Reply("Thought: main returns 42.\nFinal Answer: 42"), {}),
        (
            Reply("I should read the app.", (ToolCall("read_file", '{"file_path": "src/app.py"}'),)),
            {"tool_calling": "native"},
        ),
        (Reply("no labels at all"), {}),
        (Reply("<think>Easy.</think>\nThought: I know it.\nFinal Answer: 42"), {}),
    ],
)
def test_thought_deltas_then_the_plain_body(
    make_client: Callable[..., TestClient],
    llm_server: ScriptedLLMServer,
    reply: Reply,
    llm_config: dict[str, Any],
    chunk_chars: int,
) -> None:
    streamed = Reply(reply.text, reply.tool_calls, chunk_chars=chunk_chars)
    llm_server.push(streamed, reply)
    client = make_client()
    *thoughts, (last, result) = stream(client, llm_config=llm_config)
    plain = client.post(REACT, json=step_body(llm_config=llm_config)).json()
    assert last == "result"
    assert without_timing(result) == without_timing(plain)
    assert {name for name, _ in thoughts} <= {"thought"}
    assert "".join(data["delta"] for _, data in thoughts) == result["thought"]
    assert all("Action" not in data["delta"] and "Final" not in data["delta"] for _, data in thoughts)
    if chunk_chars == 1 and result["thought"]:
        assert len(thoughts) > 1
    assert llm_server.requests[0]["stream"] is True
    assert llm_server.requests[0]["stream_options"] == {"include_usage": True}
    assert [record.outcome for record in llm_server.streams] == ["completed"]


def test_an_empty_stream_for_a_call_is_asked_again_whole_and_remembered(
    make_client: Callable[..., TestClient], llm_server: ScriptedLLMServer
) -> None:
    """llama-cpp-python's chatml-function-calling streams a message but answers a stream in which the model
    calls a tool with a 200 and no chunk: the step asks for the reply whole, once, and that server's
    calls are asked whole from then on; a text step still streams."""
    call = Reply("Read it.", (ToolCall("read_file", '{"file_path": "src/app.py"}'),))
    llm_server.push(Reply(call.text, call.tool_calls, streams=False), call, call, Reply(TEXT_REPLY))
    client = make_client()
    native = {"tool_calling": "native"}
    for _ in range(2):
        *thoughts, (last, result) = stream(client, llm_config=native)
        assert (last, result["status"], result["action_details"]["tool_name"]) == (
            "result",
            "action_proposed",
            "read_file",
        )
        assert [data["delta"] for _, data in thoughts] == ["Read it."]
        assert result["notes"][-1] == (
            "The model server cannot stream a reply that calls a tool: the reply was asked for whole and "
            "its thought sent in one piece."
        )
    *_, (last, result) = stream(client)
    assert (last, result["status"]) == ("result", "action_proposed")
    assert [request.get("stream", False) for request in llm_server.requests] == [True, False, False, True]


def test_a_stream_cut_half_way_is_an_error_never_an_action(
    make_client: Callable[..., TestClient], llm_server: ScriptedLLMServer
) -> None:
    # Paced, so the deltas reach the client before the cut does (aiohttp drops what it buffered
    # once it sees the connection broken).
    llm_server.push(
        Reply(TEXT_REPLY, chunk_chars=4, chunk_delay_s=0.05, cut_after_chunks=6), Reply(TEXT_REPLY)
    )
    events = stream(make_client())
    assert events[-1] == (
        "error",
        {
            "error": {
                "code": "llm_unavailable",
                "message": "the LLM stream broke off before its end",
                "request_id": REQUEST_ID,  # an error event names its request, as an error body does
            }
        },
    )
    assert {name for name, _ in events[:-1]} == {"thought"}
    assert "".join(data["delta"] for _, data in events[:-1]) == "I should re"  # 5 content chunks of 4
    assert len(llm_server.requests) == 1  # deltas were sent: the step is not retried
    assert llm_server.streams == [StreamRecord(6, "cut")]


def test_a_stream_cut_before_any_delta_is_retried(
    make_client: Callable[..., TestClient], llm_server: ScriptedLLMServer
) -> None:
    llm_server.push(Reply(TEXT_REPLY, cut_after_chunks=1), Reply(TEXT_REPLY))
    name, data = stream(make_client())[-1]
    assert (name, data["status"], data["timing"]["retries"]) == ("result", "action_proposed", 1)
    assert [record.outcome for record in llm_server.streams] == ["cut", "completed"]
    assert llm_server.streams[0] == StreamRecord(1, "cut")


@pytest.mark.parametrize(
    ("script", "settings", "expected", "calls"),
    [
        ((Fault(status=429), Reply("Final Answer: 42")), {}, ("result", "final_answer", 1), 2),
        (
            (Fault(status=503), Fault(status=500), Reply("Final Answer: 42")),
            {},
            ("result", "final_answer", 2),
            3,
        ),
        ((Fault(status=429),), {"llm_max_retries": 0}, ("error", "llm_rate_limited", 0), 1),
        ((Fault(status=401),), {}, ("error", "llm_auth_failed", 0), 1),
        (
            (Reply("Thought: " + "slow " * 40, chunk_chars=5, chunk_delay_s=0.05),),
            {"llm_deadline_s": 0.4},
            ("error", "llm_timeout", 0),
            1,
        ),
        (
            (Reply("Thought: I will read the fi", finish_reason="length"),),
            {},
            ("result", "truncated_output", 0),
            1,
        ),
    ],
)
def test_faults_before_the_first_delta_are_retried(
    make_client: Callable[..., TestClient],
    llm_server: ScriptedLLMServer,
    script: tuple[Any, ...],
    settings: dict[str, Any],
    expected: tuple[str, str, int],
    calls: int,
) -> None:
    llm_server.push(*script)
    name, data = stream(make_client(**settings))[-1]
    if name == "result":
        assert (name, data["status"], data["timing"]["retries"]) == expected
    else:
        assert (name, data["error"]["code"], 0) == expected
    assert len(llm_server.requests) == calls


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ({"llm_config": {"api_base": "http://127.0.0.1:9/v1"}}, 403, "api_base_not_allowed"),
        ({"client_tools": [{"name": "read_file"}]}, 422, "validation_failed"),
    ],
)
def test_a_broken_request_is_still_a_json_error(
    make_client: Callable[..., TestClient],
    llm_server: ScriptedLLMServer,
    body: dict[str, Any],
    status: int,
    code: str,
) -> None:
    response = make_client().post(REACT, json=step_body(stream=True, **body))
    assert (response.status_code, response.json()["error"]["code"]) == (status, code)
    assert llm_server.requests == []


def test_zero_iterations_left_streams_only_the_result(
    make_client: Callable[..., TestClient], llm_server: ScriptedLLMServer
) -> None:
    assert stream(make_client(), max_iterations_left=0) == [
        (
            "result",
            {
                "session_id": "s-1",
                "status": "max_iterations_reached",
                "thought": "",
                "usage": {
                    "prompt_tokens": 0,
                    "completion_tokens": 0,
                    "total_tokens": 0,
                    "cached_tokens": None,
                    "estimated": False,
                },
                "timing": {"llm_ms": 0.0, "total_ms": 0.0, "retries": 0},
            },
        )
    ]
    assert llm_server.requests == []


def test_a_client_that_disconnects_cancels_the_upstream_call(
    tmp_path: Path, llm_server: ScriptedLLMServer, local_store: LocalStore
) -> None:
    settings = Settings(data_dir=tmp_path, llm_model="openai/scripted", llm_api_base=llm_server.base_url)
    words = 200
    llm_server.push(
        Reply("Thought: " + "word " * words + "\nFinal Answer: x", chunk_chars=5, chunk_delay_s=0.01)
    )
    with BackgroundServer(create_app(settings, store=local_store)) as server:
        with httpx.stream("POST", server.url + REACT, json=step_body(stream=True), timeout=30) as response:
            first = next(line for line in response.iter_lines() if line.startswith("data:"))
        deadline = time.monotonic() + 5
        while not llm_server.streams and time.monotonic() < deadline:
            time.sleep(0.01)
    assert json.loads(first.removeprefix("data: "))["delta"].startswith("w")
    [record] = llm_server.streams
    assert record.outcome == "disconnected"
    assert record.chunks_sent < words  # the provider stopped long before the reply's end
