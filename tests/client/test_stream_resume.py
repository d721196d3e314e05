"""The client picks a streamed step up again after its connection dropped: a loopback proxy between the
client and a real server cuts the step's stream after its first thought, and the client resumes it with
Last-Event-ID, the model asked once (sync and async stream_step, and `run` with stream)."""

import asyncio
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import aclosing
from pathlib import Path
from typing import Any

import pytest

from reactstep.client import AsyncClient, Client
from reactstep.client.api.wire import StepResult, ThoughtEvent
from reactstep.client.traces.scripted_llm import Reply, ScriptedLLMServer
from reactstep.contract.step import ReactStepRequest
from reactstep.service.http.app import create_app
from reactstep.service.http.serving import BackgroundServer
from reactstep.service.settings import Settings
from reactstep.tools.embedding.embeddings import LocalEmbedder
from reactstep.tools.store.local import LocalStore

THOUGHT = "It returns 42, as src/app.py says in its only line."
REPLY = f"Thought: {THOUGHT}\nFinal Answer: 42"


class CuttingProxy:
    """Pipes TCP to a server; the first react_step answer is cut just after its first thought event."""

    def __init__(self, target: tuple[str, int], cuts: bool = True) -> None:
        self.target = target
        self.cuts = cuts
        self.heads: list[bytes] = []
        self.cut = threading.Event()
        self.sock = socket.create_server(("127.0.0.1", 0))
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}"

    def close(self) -> None:
        self.sock.close()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        with client, socket.create_connection(self.target) as upstream:
            head = client.recv(65536)
            self.heads.append(head)
            upstream.sendall(head)
            threading.Thread(target=_pump, args=(client, upstream), daemon=True).start()
            cutting = self.cuts and head.startswith(b"POST /api/agent/react_step") and not self.cut.is_set()
            if cutting:
                self.cut.set()
            answer = b""
            while data := upstream.recv(65536):
                if not cutting:
                    client.sendall(data)
                    continue
                answer += data
                if (end := _after_first_thought(answer)) is not None:
                    client.sendall(answer[:end])
                    client.shutdown(socket.SHUT_RDWR)  # the connection drops mid-stream
                    return


def _after_first_thought(answer: bytes) -> int | None:
    """Where the chunk holding the first thought event ends, once it has all arrived."""
    start = answer.find(b"event: thought")
    if start < 0 or (end := answer.find(b"\n\n", start)) < 0:
        return None
    return end + 2 + (answer[end + 2 : end + 4] == b"\r\n") * 2


def _pump(source: socket.socket, sink: socket.socket) -> None:
    try:
        while data := source.recv(65536):
            sink.sendall(data)
    except OSError:
        pass


@pytest.fixture
def server(
    tmp_path: Path, llm_server: ScriptedLLMServer, local_store: LocalStore, local_embedder: LocalEmbedder
) -> Iterator[tuple[str, int]]:
    settings = Settings(data_dir=tmp_path, llm_model="openai/scripted", llm_api_base=llm_server.base_url)
    app = create_app(settings, store=local_store, embedder=local_embedder)
    with BackgroundServer(app) as running:
        host, port = running.url.removeprefix("http://").split(":")
        yield host, int(port)


@pytest.fixture
def proxy(server: tuple[str, int]) -> Iterator[CuttingProxy]:
    cutter = CuttingProxy(server)
    try:
        yield cutter
    finally:
        cutter.close()


@pytest.fixture
def watcher(server: tuple[str, int]) -> Iterator[CuttingProxy]:
    """The proxy without its cut: it only records the requests."""
    recorder = CuttingProxy(server, cuts=False)
    try:
        yield recorder
    finally:
        recorder.close()


def request() -> ReactStepRequest:
    return ReactStepRequest(project_id="demo", session_id="s-1", user_query="what does main return?")


def chat_requests(llm_server: ScriptedLLMServer) -> int:
    return sum("messages" in body for body in llm_server.requests)


def read_sync(url: str) -> list[Any]:
    with Client(url) as client:
        return list(client.stream_step(request()))


def read_async(url: str) -> list[Any]:
    async def main() -> list[Any]:
        async with AsyncClient(url) as client:
            return [event async for event in client.stream_step(request())]

    return asyncio.run(main())


@pytest.mark.parametrize("read", [read_sync, read_async], ids=["sync", "async"])
def test_a_dropped_stream_is_resumed_without_a_second_model_call(
    proxy: CuttingProxy, llm_server: ScriptedLLMServer, read: Any
) -> None:
    llm_server.push(Reply(text=REPLY, chunk_chars=4, chunk_delay_s=0.05))
    events = read(proxy.url)
    assert proxy.cut.is_set()
    assert isinstance(events[-1], StepResult) and events[-1].response.final_answer == "42"
    assert all(isinstance(event, ThoughtEvent) for event in events[:-1])
    assert "".join(event.delta for event in events[:-1]) == THOUGHT == events[-1].response.thought
    first_lines = [head.split(b"\r\n", 1)[0].decode() for head in proxy.heads]
    assert first_lines[0] == "POST /api/agent/react_step HTTP/1.1"
    assert first_lines[1].startswith("GET /api/agent/steps/demo~") and first_lines[1].endswith(
        "/events HTTP/1.1"
    )
    assert b"\r\nlast-event-id: 1\r\n" in proxy.heads[1].lower()
    assert len(proxy.heads) == 2
    assert chat_requests(llm_server) == 1


def test_run_with_stream_resumes_a_dropped_step(proxy: CuttingProxy, llm_server: ScriptedLLMServer) -> None:
    llm_server.push(Reply(text=REPLY, chunk_chars=4, chunk_delay_s=0.05))
    thoughts: list[str] = []
    with Client(proxy.url) as client:
        result = client.run("what does main return?", project="demo", stream=True, on_thought=thoughts.append)
    assert proxy.cut.is_set()
    assert (result.status, result.answer, "".join(thoughts)) == ("final_answer", "42", THOUGHT)
    assert chat_requests(llm_server) == 1


def leave_sync(url: str) -> Any:
    with Client(url) as client:
        events = client.stream_step(request())
        first = next(events)
        events.close()  # the caller stops reading: a break out of its loop, or Ctrl-C
        return first


def leave_async(url: str) -> Any:
    async def main() -> Any:
        async with AsyncClient(url) as client, aclosing(client.stream_step(request())) as events:
            async for event in events:
                return event  # leaves the stream: aclosing closes it at once
        return None

    return asyncio.run(main())


@pytest.mark.parametrize("leave", [leave_sync, leave_async], ids=["sync", "async"])
def test_a_stream_left_early_stops_its_step_and_its_model_call(
    watcher: CuttingProxy, llm_server: ScriptedLLMServer, leave: Any
) -> None:
    llm_server.push(Reply(text=REPLY, chunk_chars=2, chunk_delay_s=0.1))
    assert isinstance(leave(watcher.url), ThoughtEvent)
    deadline = time.monotonic() + 30  # a wait, not a measure: room for a loaded 2-core machine
    while not llm_server.streams:
        assert time.monotonic() < deadline, "the model's stream never ended"
        time.sleep(0.02)
    assert llm_server.streams[0].outcome == "disconnected"
    assert llm_server.streams[0].chunks_sent < len(REPLY) // 2  # stopped well before its end
    first_lines = [head.split(b"\r\n", 1)[0].decode() for head in watcher.heads]
    assert first_lines[0] == "POST /api/agent/react_step HTTP/1.1"
    assert first_lines[1].startswith("DELETE /api/agent/steps/demo~") and len(first_lines) == 2
    assert chat_requests(llm_server) == 1


def test_a_cancelled_async_run_stops_its_step(watcher: CuttingProxy, llm_server: ScriptedLLMServer) -> None:
    """What Ctrl-C does to `asyncio.run(...)`: the task is cancelled mid-step, and the step with it."""
    llm_server.push(Reply(text=REPLY, chunk_chars=2, chunk_delay_s=0.1))

    async def main() -> None:
        thinking = asyncio.Event()
        async with AsyncClient(watcher.url) as client:
            running = asyncio.create_task(
                client.run(
                    "what does main return?", project="demo", stream=True, on_thought=lambda _: thinking.set()
                )
            )
            await thinking.wait()
            running.cancel()
            with pytest.raises(asyncio.CancelledError):
                await running

    asyncio.run(main())
    deadline = time.monotonic() + 30  # a wait, not a measure: room for a loaded 2-core machine
    while not llm_server.streams:
        assert time.monotonic() < deadline, "the model's stream never ended"
        time.sleep(0.02)
    assert llm_server.streams[0].outcome == "disconnected"
    first_lines = [head.split(b"\r\n", 1)[0].decode() for head in watcher.heads]
    assert [line.split(" ")[0] for line in first_lines] == ["POST", "DELETE"]
    assert chat_requests(llm_server) == 1
