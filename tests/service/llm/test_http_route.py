"""Chat completions go through litellm's own httpx route, not the OpenAI SDK, and read the same.

A bare loopback server answers each POST with a fixed status and body and keeps the headers it was
sent: the SDK marks every request it makes with x-stainless-* headers, litellm's handler does not.
"""

import asyncio
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from reactstep.service.errors import UpstreamError
from reactstep.service.llm.completions import LiteLLMGateway
from reactstep.service.llm.protocol import LLMReply, LLMRequest

MESSAGES = [{"role": "user", "content": "What does main return?"}]
COMPLETION = {
    "id": "c",
    "object": "chat.completion",
    "created": 0,
    "model": "m",
    "choices": [
        {"index": 0, "message": {"role": "assistant", "content": "Final Answer: 42"}, "finish_reason": "stop"}
    ],
    "usage": {
        "prompt_tokens": 9,
        "completion_tokens": 4,
        "total_tokens": 13,
        "prompt_tokens_details": {"cached_tokens": 5},
    },
}
REJECTED = "the LLM provider rejected the call"


class FixedAnswer:
    """Answers every POST with `status` and `body`; keeps each request's headers."""

    def __init__(self) -> None:
        self.status = 200
        self.body = b""
        self.headers: list[dict[str, str]] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("content-length") or 0))
                owner.headers.append({name.lower(): value for name, value in self.headers.items()})
                self.send_response(owner.status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(owner.body)))
                self.end_headers()
                self.wfile.write(owner.body)

            def log_message(self, format: str, *args: Any) -> None:
                """Quiet."""

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def answer(self, status: int, body: object) -> None:
        self.status = status
        self.body = body.encode() if isinstance(body, str) else json.dumps(body).encode()


@pytest.fixture
def fixed() -> Iterator[FixedAnswer]:
    server = FixedAnswer()
    thread = threading.Thread(target=server.server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.server.shutdown()
        server.server.server_close()


def complete(fixed: FixedAnswer) -> LLMReply:
    request = LLMRequest("openai/m", MESSAGES, 0.0, 64, 10.0, api_base=fixed.base_url, stop=("Observation:",))
    return asyncio.run(LiteLLMGateway(max_workers=1).complete(request))


def test_a_chat_call_skips_the_openai_sdk_and_reads_the_whole_answer(fixed: FixedAnswer) -> None:
    fixed.answer(200, COMPLETION)
    reply = complete(fixed)
    assert (reply.text, reply.finish_reason, reply.tool_calls) == ("Final Answer: 42", "stop", ())
    assert reply.usage.model_dump() == {
        "prompt_tokens": 9,
        "completion_tokens": 4,
        "total_tokens": 13,
        "cached_tokens": 5,
        "estimated": False,
        "cost_usd": None,  # the gateway's reply; the metered gateway around it prices it
    }
    assert [name for name in fixed.headers[0] if name.startswith("x-stainless")] == []
    assert fixed.headers[0]["authorization"] == "Bearer none"


@pytest.mark.parametrize(
    ("status", "body", "code", "message"),
    [
        # OpenAI and llama.cpp, vLLM, Ollama, FastAPI: the body's own message (the SDK cut the first two so)
        (
            400,
            {"error": {"message": "bad thing", "type": "invalid_request_error", "code": None}},
            "llm_bad_response",
            f"{REJECTED} (HTTP 400): bad thing",
        ),
        (
            400,
            {"object": "error", "message": "vllm style", "type": "BadRequestError", "code": 400},
            "llm_bad_response",
            f"{REJECTED} (HTTP 400): vllm style",
        ),
        (
            404,
            {"error": "model 'm' not found"},
            "llm_bad_response",
            f"{REJECTED} (HTTP 404): model 'm' not found",
        ),
        (
            400,
            {"detail": "fastapi style"},
            "llm_bad_response",
            f"{REJECTED} (HTTP 400): fastapi style",
        ),
        # a body in no known shape stays whole; no body leaves no dangling dash
        (
            422,
            {"detail": [{"loc": ["body"], "msg": "field required"}]},
            "llm_bad_response",
            f'{REJECTED} (HTTP 422): {{"detail": [{{"loc": ["body"], "msg": "field required"}}]}}',
        ),
        (
            500,
            "",
            "llm_unavailable",
            "the LLM provider is unavailable (HTTP 500) with no message",
        ),
        (
            500,
            "plain text failure",
            "llm_unavailable",
            "the LLM provider is unavailable (HTTP 500): plain text failure",
        ),
    ],
)
def test_provider_error_bodies_read_as_their_message(
    fixed: FixedAnswer, status: int, body: object, code: str, message: str
) -> None:
    fixed.answer(status, body)
    with pytest.raises(UpstreamError) as raised:
        complete(fixed)
    assert (raised.value.code, str(raised.value)) == (code, message)
    assert len(fixed.headers) == 1  # litellm asks once: no retry of its own
