"""Every input bounded: each limit answers a 4xx (or 503 overloaded) with a code naming it, fast."""

import asyncio
import json
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.testclient import TestClient

from reactstep.contract.history import MAX_HISTORY_ITEMS
from reactstep.contract.step_report import Usage
from reactstep.service.http.admission import AdmissionLimiter
from reactstep.service.http.app import create_app
from reactstep.service.http.serving import BackgroundServer
from reactstep.service.limits import MAX_REPLY_CHARS
from reactstep.service.llm.protocol import LLMReply, LLMRequest
from reactstep.service.settings import Settings
from reactstep.tools.store.local import LocalStore
from tests.service.http.test_openapi import errors_of, lookup, response_pointer
from tests.timing import LOAD_SLACK_S

REACT, EXECUTE = "/api/agent/react_step", "/api/agent/execute_action"
BASE = {"project_id": "demo", "session_id": "s", "user_query": "q"}
STEP = {
    "thought": "t",
    "action_details": {"tool_name": "read_file", "tool_args": {}, "raw_action_string": "Action: read_file()"},
    "observation": "o",
}


def nested(depth: int) -> bytes:
    """An execute_action body nesting `depth` levels in all: the body, tool_args, then lists."""
    lists = "[" * (depth - 2) + "]" * (depth - 2)
    head = '{"project_id": "demo", "session_id": "s", "tool_name": "x", "tool_args": {"a": '
    return f"{head}{lists}}}}}".encode()


@pytest.mark.parametrize(
    ("content", "status", "code"),
    [
        (nested(31), 200, None),
        (nested(32), 200, None),
        (nested(33), 400, "json_too_deep"),
        (b"[" * 40 + b"]" * 40, 400, "json_too_deep"),
        (b'{"a":' * 10_000 + b"1" + b"}" * 10_000, 400, "json_too_deep"),  # past the parser's recursion
        # More objects than any body needs is refused before its nesting is read.
        (b'{"a":' * 100_000 + b"1" + b"}" * 100_000, 413, "payload_too_large"),
    ],
)
def test_json_nesting_is_bounded_before_validation(
    make_client: Callable[..., TestClient], content: bytes, status: int, code: str | None
) -> None:
    client = make_client(max_body_bytes=2_000_000)
    response = client.post(EXECUTE, content=content, headers={"content-type": "application/json"})
    assert response.status_code == status
    if code is not None:
        assert response.json()["error"]["code"] == code


def test_a_declared_oversize_body_is_refused_before_it_is_read(
    make_client: Callable[..., TestClient],
) -> None:
    def endless() -> Iterator[bytes]:
        raise AssertionError("the body was read")
        yield b""

    client = make_client(max_body_bytes=1_000)
    headers = {"content-type": "application/json", "content-length": "5000"}
    response = client.post(REACT, content=endless(), headers=headers)
    assert (response.status_code, response.json()["error"]["code"]) == (413, "payload_too_large")


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"conversation_history": [{**STEP, "observation": "o" * 200_001}]}, "conversation_history.0"),
        ({"conversation_history": [{**STEP, "thought": "t" * 200_001}]}, "conversation_history.0"),
        (
            {"conversation_history": [{"raw_output": "r" * 200_001, "format_error": "f"}]},
            "conversation_history.0",
        ),
        ({"conversation_history": [{"role": "user", "content": "c" * 200_001}]}, "conversation_history.0"),
        (
            {
                "client_tools": [
                    {"name": "t", "parameters": {"type": "object", **{f"k{i}": 1 for i in range(64)}}}
                ]
            },
            "client_tools.0.parameters",
        ),
        ({"user_query": "q" * 20_001}, "user_query"),
        ({"llm_config": {"model": "m" * 201}}, "llm_config.model"),
        ({"session_id": "s" * 129}, "session_id"),
    ],
)
def test_string_and_list_lengths_name_the_field(
    make_client: Callable[..., TestClient], change: dict[str, Any], field: str
) -> None:
    response = make_client(max_body_bytes=2_000_000).post(REACT, json={**BASE, **change})
    assert (response.status_code, response.json()["error"]["code"]) == (422, "validation_failed")
    assert any(detail["field"].startswith(field) for detail in response.json()["error"]["details"])
    assert errors_of("/components/schemas/ReactStepRequest", {**BASE, **change}) != []  # the spec agrees


def test_tool_args_are_bounded(make_client: Callable[..., TestClient]) -> None:
    body = {**BASE, "tool_name": "read_file", "tool_args": {f"k{i}": 1 for i in range(65)}}
    del body["user_query"]
    response = make_client().post(EXECUTE, json=body)
    assert (response.status_code, response.json()["error"]["details"][0]["field"]) == (422, "tool_args")


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("grep", {"pattern": "x", "max_results": 501}),
        ("grep", {"pattern": "x" * 1001}),
        ("grep", {"pattern": "x", "context_lines": 11}),
        ("find_files", {"pattern": "*", "max_results": 501}),
        ("code_search", {"query": "x", "max_results": 101}),
        ("read_file", {"file_path": "a" * 1025}),
    ],
)
def test_tool_limits_are_observations_the_model_can_fix(
    make_client: Callable[..., TestClient], tool: str, args: dict[str, Any]
) -> None:
    body = {"project_id": "demo", "session_id": "s", "tool_name": tool, "tool_args": args}
    response = make_client().post(EXECUTE, json=body)
    assert (response.status_code, response.json()["is_error"]) == (200, True)


def test_regex_cost_is_linear(make_client: Callable[..., TestClient], local_store: LocalStore) -> None:
    """A pattern that backtracks exponentially in Python's re runs in linear time on RE2."""
    local_store.put("demo", "evil.txt", ("a" * 50_000 + "!\n").encode() * 10)
    body = {"project_id": "demo", "session_id": "s", "tool_name": "grep", "tool_args": {"pattern": "(a+)+$"}}
    started = time.perf_counter()
    response = make_client().post(EXECUTE, json=body)
    assert response.status_code == 200
    assert time.perf_counter() - started < 5 + LOAD_SLACK_S


class LongWindedGateway:
    """Answers every call with a reply far longer than any limit."""

    def __init__(self, text: str) -> None:
        self.text = text

    async def complete(self, request: LLMRequest) -> LLMReply:
        return LLMReply(text=self.text, usage=Usage(), finish_reason="stop", elapsed_ms=1.0)

    async def stream(self, request: LLMRequest) -> AsyncIterator[str | LLMReply]:
        reply = await self.complete(request)
        yield reply.text
        yield reply


@pytest.mark.parametrize("stream", [False, True])
def test_a_huge_model_reply_is_cut(tmp_path: Path, local_store: LocalStore, stream: bool) -> None:
    gateway = LongWindedGateway("Thought: " + "blah " * 100_000)
    settings = Settings(data_dir=tmp_path)
    client = TestClient(create_app(settings, llm=gateway, store=local_store))
    response = client.post(REACT, json={**BASE, "stream": stream})
    body = response.json() if not stream else json.loads(response.text.rsplit("data: ", 1)[1])
    assert (body["status"], len(body["raw_output"])) == ("truncated_output", MAX_REPLY_CHARS)
    assert f"The model's reply (500009 characters) was cut to the first {MAX_REPLY_CHARS}." in body["notes"]


def test_history_and_max_tokens_limits_have_their_own_codes(make_client: Callable[..., TestClient]) -> None:
    client = make_client(llm_max_tokens_cap=100)
    history = client.post(REACT, json={**BASE, "conversation_history": [STEP] * (MAX_HISTORY_ITEMS + 1)})
    tokens = client.post(REACT, json={**BASE, "llm_config": {"max_tokens": 101}})
    assert [r.json()["error"]["code"] for r in (history, tokens)] == [
        "history_too_long",
        "max_tokens_too_large",
    ]
    assert [r.status_code for r in (history, tokens)] == [422, 422]


# --- admission ----------------------------------------------------------------------------------


def test_limiter_admits_queues_refuses_and_hands_slots_on_in_order() -> None:
    async def scenario() -> list[str]:
        limiter = AdmissionLimiter(limit=2, max_queue=2, wait_s=5)
        events: list[str] = []
        assert await limiter.acquire() and await limiter.acquire()

        async def wait(name: str) -> None:
            events.append(f"{name} {'in' if await limiter.acquire() else 'refused'}")

        waiters = [asyncio.create_task(wait(name)) for name in ("w1", "w2")]
        await asyncio.sleep(0.01)
        events.append(f"full {await limiter.acquire()}")  # two working, two waiting: refused at once
        limiter.release()
        await asyncio.sleep(0.01)
        limiter.release()
        await asyncio.gather(*waiters)
        events.append(f"active {limiter.active} waiting {limiter.waiting}")
        return events

    assert asyncio.run(scenario()) == ["full False", "w1 in", "w2 in", "active 2 waiting 0"]


def test_limiter_timeouts_and_cancellations_leak_no_slot() -> None:
    async def scenario() -> tuple[bool, int, int]:
        limiter = AdmissionLimiter(limit=1, max_queue=5, wait_s=0.05)
        assert await limiter.acquire()
        timed_out = await limiter.acquire()
        cancelled = asyncio.create_task(limiter.acquire())
        await asyncio.sleep(0.01)
        cancelled.cancel()
        await asyncio.gather(cancelled, return_exceptions=True)
        limiter.release()
        return timed_out, limiter.active, limiter.waiting

    assert asyncio.run(scenario()) == (False, 0, 0)


# The model time of an admitted step: longer than a refusal takes on a loaded machine, shorter than
# the queue's 5 s wait by as much.
MODEL_S = 0.5 + LOAD_SLACK_S / 2


class SlowGateway:
    """Takes `delay_s` to answer each call, without blocking the event loop."""

    def __init__(self, delay_s: float) -> None:
        self.delay_s = delay_s

    async def complete(self, request: LLMRequest) -> LLMReply:
        await asyncio.sleep(self.delay_s)
        return LLMReply(text="Final Answer: ok", usage=Usage(), finish_reason="stop", elapsed_ms=1.0)

    async def stream(self, request: LLMRequest) -> AsyncIterator[str | LLMReply]:
        yield await self.complete(request)


@pytest.fixture
def saturated(tmp_path: Path, local_store: LocalStore) -> Iterator[str]:
    """A real server on loopback that works on 2 requests at once and queues 2 more."""
    settings = Settings(data_dir=tmp_path, max_concurrent_requests=2, max_queue=2)
    with BackgroundServer(create_app(settings, llm=SlowGateway(MODEL_S), store=local_store)) as server:
        yield server.url


def test_saturation_answers_503_at_once_instead_of_queueing(saturated: str) -> None:
    results: list[tuple[int, float, httpx.Response]] = []
    lock = threading.Lock()
    client = httpx.Client(base_url=saturated, timeout=10, limits=httpx.Limits(max_connections=20))

    def one() -> None:
        started = time.perf_counter()
        response = client.post(REACT, json=BASE)
        with lock:
            results.append((response.status_code, time.perf_counter() - started, response))

    threads = [threading.Thread(target=one) for _ in range(10)]
    with client:
        assert client.post(REACT, json=BASE, timeout=120).status_code == 200  # the first step imports litellm
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert client.get("/healthz").status_code == 200  # GETs never wait for a slot
    assert sorted(status for status, _, _ in results) == [200] * 4 + [503] * 6
    admitted = [elapsed for status, elapsed, _ in results if status == 200]
    refused = [(elapsed, response) for status, elapsed, response in results if status == 503]
    # Each refusal came back before even the first admitted request (MODEL_S of model time) finished.
    assert max(elapsed for elapsed, _ in refused) < min(admitted)
    for _, response in refused:
        assert response.headers["retry-after"] == "1"
        assert response.json()["error"]["code"] == "overloaded"
        pointer = response_pointer(REACT, "POST", 503)
        assert errors_of(f"{pointer}/content/application~1json/schema", response.json()) == []
        assert "overloaded" in lookup(pointer)["x-error-codes"]
