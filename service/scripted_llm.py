"""A scripted OpenAI-compatible chat server on loopback: replays fixed replies in order.

Trace replay serves the recorded model replies with it, and tests drive litellm against it over real
HTTP. A script item is the reply text, or a Fault (an HTTP error status, or a delay before answering).
"""

import json
import threading
import time
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Fault:
    """A scripted failure: answer with `status`, or wait `delay_s` before the next item."""

    status: int = 0
    delay_s: float = 0.0
    message: str = "scripted fault"


ScriptItem = str | Fault


class ScriptedLLMServer:
    """Serves POST /v1/chat/completions from a script; records every request body."""

    def __init__(self, script: Iterable[ScriptItem] = (), host: str = "127.0.0.1") -> None:
        self._script: deque[ScriptItem] = deque(script)
        self._lock = threading.Lock()
        self.requests: list[dict[str, Any]] = []
        self.authorizations: list[str] = []
        self._host = host
        self._server = ThreadingHTTPServer((host, 0), _handler_for(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        """The OpenAI-style API base, e.g. http://127.0.0.1:PORT/v1."""
        return f"http://{self._host}:{self._server.server_address[1]}/v1"

    def push(self, *items: ScriptItem) -> None:
        """Append replies to the script."""
        with self._lock:
            self._script.extend(items)

    def next_item(self) -> ScriptItem | None:
        """Pop the next scripted item; None when the script is used up."""
        with self._lock:
            return self._script.popleft() if self._script else None

    def record(self, body: dict[str, Any], authorization: str) -> None:
        """Keep a request body and its Authorization header for later assertions."""
        with self._lock:
            self.requests.append(body)
            self.authorizations.append(authorization)

    def start(self) -> "ScriptedLLMServer":
        """Start serving in a background thread."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and free the port."""
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> "ScriptedLLMServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def completion_body(model: str, text: str, prompt_chars: int) -> dict[str, Any]:
    """An OpenAI chat.completion body; token counts are characters / 4, deterministically."""
    prompt_tokens, completion_tokens = prompt_chars // 4, len(text) // 4
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "stop",
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def _handler_for(server: ScriptedLLMServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            server.record(body, self.headers.get("authorization", ""))
            if not self.path.rstrip("/").endswith("/chat/completions"):
                self._send(404, {"error": {"message": f"no route {self.path}"}})
                return
            self._answer(body)

        def _answer(self, body: dict[str, Any]) -> None:
            item = server.next_item()
            while isinstance(item, Fault) and item.delay_s and not item.status:
                time.sleep(item.delay_s)
                item = server.next_item()
            if item is None:
                self._send(500, {"error": {"message": "the script has no more replies"}})
            elif isinstance(item, Fault):
                self._send(item.status, {"error": {"message": item.message}})
            else:
                chars = sum(len(str(m.get("content", ""))) for m in body.get("messages", []))
                self._send(200, completion_body(str(body.get("model", "")), item, chars))

        def _send(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            """Stay quiet: tests and replays print their own output."""

    return Handler
