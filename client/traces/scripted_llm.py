"""A scripted OpenAI-compatible chat server on loopback: replays fixed replies in order.

Trace replay serves the recorded model replies with it, and tests drive litellm against it over real
HTTP. Each request takes the next script item (see scripted_replies.py): reply text, a Reply
(tool calls, finish_reason, how it streams), a Fault (an HTTP error status, or a delay), or a Recorded
step. `"stream": true` requests get an OpenAI SSE chunk stream over chunked transfer encoding; a
Reply with cut_after_chunks drops the connection mid-stream, without the final chunk or [DONE]; a sticky
Fault answers every request after it (a trace that ended in an LLM error replays it, retries included).
While it waits (a delay, a pause between chunks) it watches the connection, so a client that closes
it is seen at once: the moment goes into `closes`, and the answer stops there.
"""

import json
import re
import select
import socket
import sys
import threading
import time
import zlib
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from reactstep.client.traces.scripted_replies import (
    Fault,
    Recorded,
    Reply,
    ScriptItem,
    ToolCall,
    as_reply,
    completion_body,
    stream_chunks,
)

__all__ = ["Fault", "Recorded", "Reply", "ScriptItem", "ScriptedLLMServer", "StreamRecord", "ToolCall"]


@dataclass(frozen=True)
class StreamRecord:
    """How one streamed answer went: chunks written, and whether it `completed`, was `cut` by the
    script, or the client `disconnected` before the end."""

    chunks_sent: int
    outcome: str


class ScriptedLLMServer:
    """Serves POST /v1/chat/completions from a script; records every request body."""

    def __init__(
        self,
        script: Iterable[ScriptItem] = (),
        host: str = "127.0.0.1",
        reject_params: Iterable[str] = (),
    ) -> None:
        self._script: deque[ScriptItem] = deque(script)
        self._lock = threading.Lock()
        self.requests: list[dict[str, Any]] = []
        self.authorizations: list[str] = []
        self.streams: list[StreamRecord] = []
        self.closes: list[float] = []  # time.monotonic() when a client closed a request being answered
        self.reject_params = frozenset(reject_params)
        self._host = host
        self._server = _QuietServer((host, 0), self)
        self._thread = threading.Thread(target=self._serve, daemon=True)

    @property
    def base_url(self) -> str:
        """The OpenAI-style API base, e.g. http://127.0.0.1:PORT/v1."""
        return f"http://{self._host}:{self._server.server_address[1]}/v1"

    def push(self, *items: ScriptItem) -> None:
        """Append replies to the script."""
        with self._lock:
            self._script.extend(items)

    def next_fault(self) -> Fault | None:
        """Pop the next item only if it is a Fault (embedding calls answer everything else)."""
        with self._lock:
            if self._script and isinstance(self._script[0], Fault):
                item = self._script.popleft()
                assert isinstance(item, Fault)
                return item
            return None

    def next_item(self) -> ScriptItem | None:
        """Pop the next scripted item (a sticky Fault stays); None when the script is used up."""
        with self._lock:
            if self._script and isinstance(self._script[0], Fault) and self._script[0].sticky:
                return self._script[0]
            return self._script.popleft() if self._script else None

    def record(self, body: dict[str, Any], authorization: str) -> None:
        """Keep a request body and its Authorization header for later assertions."""
        with self._lock:
            self.requests.append(body)
            self.authorizations.append(authorization)

    def record_stream(self, record: StreamRecord) -> None:
        """Keep how a streamed answer ended."""
        with self._lock:
            self.streams.append(record)

    def record_close(self) -> None:
        """A client closed its request before the answer was done: when it was seen."""
        with self._lock:
            self.closes.append(time.monotonic())

    def start(self) -> "ScriptedLLMServer":
        """Start serving in a background thread."""
        self._thread.start()
        return self

    def _serve(self) -> None:
        # A short poll interval lets stop() return at once instead of after half a second.
        self._server.serve_forever(poll_interval=0.01)

    def stop(self) -> None:
        """Stop serving and free the port."""
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> "ScriptedLLMServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class _QuietServer(ThreadingHTTPServer):
    """The HTTP server, knowing the script it serves."""

    daemon_threads = True

    def __init__(self, address: tuple[str, int], owner: ScriptedLLMServer) -> None:
        super().__init__(address, _Handler)
        self.owner = owner

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that went away (a timeout, a cancelled stream) is expected here, not an error."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # chunked streams, so a cut one is visible as a broken body
    disable_nagle_algorithm = True  # headers and body go out as written, not after a delayed ACK
    server: _QuietServer

    def _embed(self, script: "ScriptedLLMServer", body: dict[str, Any]) -> None:
        fault = script.next_fault()
        if fault is not None and fault.delay_s:
            time.sleep(fault.delay_s)
        if fault is not None and fault.status:
            self._send(fault.status, {"error": {"message": fault.message}})
            return
        inputs = body.get("input", [])
        texts = [inputs] if isinstance(inputs, str) else list(inputs)
        data = [{"object": "embedding", "index": n, "embedding": word_vector(t)} for n, t in enumerate(texts)]
        usage = {"prompt_tokens": 0, "total_tokens": 0}
        self._send(200, {"object": "list", "model": body.get("model", ""), "data": data, "usage": usage})

    def do_POST(self) -> None:
        script = self.server.owner
        length = int(self.headers.get("content-length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        script.record(body, self.headers.get("authorization", ""))
        if self.path.rstrip("/").endswith("/embeddings"):
            self._embed(script, body)
            return
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._send(404, {"error": {"message": f"no route {self.path}"}})
            return
        rejected = sorted(script.reject_params & set(body))
        if rejected:
            message = f"Unsupported parameter: '{rejected[0]}' is not supported with this model."
            self._send(400, {"error": {"message": message, "param": rejected[0]}})
            return
        self._answer(body)

    def _answer(self, body: dict[str, Any]) -> None:
        item = self.server.owner.next_item()
        while isinstance(item, Fault) and item.delay_s and not item.status:
            time.sleep(item.delay_s)
            item = self.server.owner.next_item()
        if item is None:
            self._send(500, {"error": {"message": "the script has no more replies"}})
        elif isinstance(item, Fault):
            headers = {"retry-after": item.retry_after} if item.retry_after else {}
            self._send(item.status, {"error": {"message": item.message}}, headers)
        else:
            self._reply(body, as_reply(item, native=bool(body.get("tools"))))

    def _reply(self, body: dict[str, Any], reply: Reply) -> None:
        if not self._pause(reply.delay_s):
            return
        model = str(body.get("model", ""))
        chars = sum(len(str(m.get("content") or "")) for m in body.get("messages", []))
        if not body.get("stream"):
            self._send(200, completion_body(model, reply, chars))
            return
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        chunks = list(stream_chunks(model, reply, chars, include_usage)) if reply.streams else []
        self._stream(chunks, reply)

    def _stream(self, payloads: list[str], reply: Reply) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        limit = len(payloads) if reply.cut_after_chunks is None else reply.cut_after_chunks
        sent = 0
        try:
            for payload in payloads[:limit]:
                if not self._pause(reply.chunk_delay_s):  # the close is recorded
                    self.server.owner.record_stream(StreamRecord(sent, "disconnected"))
                    return
                self._write_chunk(f"data: {payload}\n\n".encode())
                sent += 1
            if limit == len(payloads):
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()
        except ConnectionError:
            self.server.owner.record_stream(StreamRecord(sent, "disconnected"))
            self.close_connection = True
            self.server.owner.record_close()  # seen by a write that failed
            return
        self.server.owner.record_stream(StreamRecord(sent, "completed" if limit == len(payloads) else "cut"))
        # A cut stream ends with the connection, never with the final chunk.
        self.close_connection = limit != len(payloads)

    def _pause(self, seconds: float) -> bool:
        """Wait `seconds` watching the connection; False (the close recorded) when the client closed it."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            if not select.select([self.connection], [], [], left)[0]:
                continue
            try:
                closed = not self.connection.recv(1, socket.MSG_PEEK)
            except ConnectionError:
                closed = True
            if not closed:  # the client sent more (its next request): it is not for now
                time.sleep(max(deadline - time.monotonic(), 0))
                break
            self.server.owner.record_close()
            self.close_connection = True
            return False
        return True

    def _write_chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _send(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        """Stay quiet: tests and replays print their own output."""


EMBEDDING_DIMENSION = 64


def word_vector(text: str) -> list[float]:
    """A bag-of-words vector: texts sharing words are near, so tests can check a real search."""
    vector = [0.0] * EMBEDDING_DIMENSION
    for word in re.findall(r"[a-z0-9]+", text.lower()):
        vector[zlib.crc32(word.encode()) % EMBEDDING_DIMENSION] += 1.0
    return vector
