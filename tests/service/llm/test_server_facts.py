"""What a model server says of itself, read from its own answers over real HTTP: a small server on
loopback answers as llama.cpp, vLLM, llama-cpp-python or Ollama document it (tests/llm_server/ runs the
real llama-cpp-python)."""

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from reactstep.service.llm.server_facts import server_facts

Answers = dict[tuple[str, str], Any]  # (method, path) -> the JSON a 200 carries


@contextmanager
def model_server(answers: Answers) -> Iterator[str]:
    """A loopback server that answers these paths and 404s the rest; yields its /v1 api_base."""

    class Handler(BaseHTTPRequestHandler):
        def _answer(self, method: str) -> None:
            length = int(self.headers.get("content-length") or 0)
            body = json.loads(self.rfile.read(length) or b"null")
            found = answers.get((method, self.path))
            reply = found(body) if callable(found) else found
            status, reply = reply if isinstance(reply, tuple) else (404 if found is None else 200, reply)
            payload = json.dumps(reply).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def do_GET(self) -> None:
            self._answer("GET")

        def do_POST(self) -> None:
            self._answer("POST")

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def words(body: dict[str, Any]) -> int:
    return len(str(body.get("input") or body.get("prompt") or body.get("content")).split())


def refuse_over(n_ctx: int, body: dict[str, Any]) -> tuple[int, Any]:
    """llama-cpp-python's answer to a prompt longer than its window (a 400 naming it), else a reply."""
    tokens = sum(len(str(message["content"]).split()) for message in body["messages"])
    if tokens <= n_ctx:
        return 200, {"choices": [{"message": {"content": "ok"}}], "usage": {"prompt_tokens": tokens}}
    message = (
        f"This model's maximum context length is {n_ctx} tokens. However, you requested {tokens + 1} tokens "
        f"({tokens} in the messages, 1 in the completion). Please reduce the length of the messages or "
        "completion."
    )
    error = {"message": message, "type": "invalid_request_error", "code": "context_length_exceeded"}
    return 400, {"error": error}


CASES = {
    "llama.cpp": (
        {
            ("GET", "/props"): {"default_generation_settings": {"n_ctx": 4096}},
            ("POST", "/tokenize"): lambda body: {"tokens": list(range(words(body)))},
        },
        4096,
        "llama.cpp's /props",
    ),
    "vLLM": (
        {
            ("GET", "/v1/models"): {
                "data": [{"id": "other", "max_model_len": 1}, {"id": "m", "max_model_len": 32768}]
            },
            ("POST", "/tokenize"): lambda body: {"count": words(body), "max_model_len": 32768},
        },
        32768,
        "vLLM's /v1/models",
    ),
    "llama-cpp-python": (
        {
            ("GET", "/v1/models"): {
                "object": "list",
                "data": [{"id": "m", "object": "model", "owned_by": "me"}],
            },
            ("POST", "/extras/tokenize/count"): lambda body: {"count": words(body)},
        },
        2048,
        "llama-cpp-python's default n_ctx: it said none",
    ),
    "llama-cpp-python, --n_ctx 4096": (
        {
            ("GET", "/v1/models"): {"data": [{"id": "m", "object": "model", "owned_by": "me"}]},
            ("POST", "/v1/chat/completions"): lambda body: refuse_over(4096, body),
        },
        4096,
        "llama-cpp-python's n_ctx, as it said",
    ),
    "Ollama, num_ctx set": (
        {
            ("GET", "/v1/models"): {"data": [{"id": "m", "owned_by": "library"}]},
            ("POST", "/api/show"): {"parameters": 'stop "<|im_end|>"\nnum_ctx 16384'},
        },
        16384,
        "Ollama's num_ctx",
    ),
    "Ollama, its default": (
        {("GET", "/v1/models"): {"data": [{"id": "m", "owned_by": "library"}]}, ("POST", "/api/show"): {}},
        4096,
        "Ollama's num_ctx",
    ),
    "another server": ({("GET", "/v1/models"): {"data": [{"id": "m", "owned_by": "someone"}]}}, None, ""),
}


@pytest.mark.parametrize(("answers", "window", "source"), list(CASES.values()), ids=list(CASES))
def test_the_window_and_the_tokenizer_come_from_the_server(
    answers: Answers, window: int | None, source: str
) -> None:
    with model_server(answers) as api_base:
        facts = server_facts(api_base, "openai/m", None)
        assert (facts.window, facts.source) == (window, source)
        counts = any(path.endswith(("tokenize", "count")) for _, path in answers)
        assert (facts.count("three small words") if facts.count else None) == (3 if counts else None)
