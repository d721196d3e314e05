"""Ctrl-C on `reactstep ask` (a process of its own) while the model works: the command ends with the
exit code table's interrupt code, the step's request is closed, so the server cancels its model call
(the scripted model server sees its request closed within a second), and the trace ends saying so."""

import asyncio
import json
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from reactstep.client import AsyncClient
from reactstep.client.cli.exit_codes import INTERRUPTED
from reactstep.client.traces.scripted_llm import Reply, ScriptedLLMServer
from reactstep.service.http.app import create_app
from reactstep.service.http.serving import BackgroundServer
from reactstep.service.settings import Settings
from reactstep.tools.store.local import LocalStore
from tests.served import REACTSTEP

THINKS_A_MINUTE = Reply("Thought: I know it.\nFinal Answer: 42", delay_s=60, chunk_delay_s=0.5)


@pytest.fixture
def url(tmp_path: Path, llm_server: ScriptedLLMServer, local_store: LocalStore) -> Iterator[str]:
    settings = Settings(
        data_dir=tmp_path / "server", llm_model="openai/scripted", llm_api_base=llm_server.base_url
    )
    with BackgroundServer(create_app(settings, store=local_store)) as server:
        yield server.url


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_ctrl_c_on_ask_closes_the_model_call_and_ends_with_the_interrupt_code(
    url: str, llm_server: ScriptedLLMServer, env: dict[str, str], tmp_path: Path, stream: bool
) -> None:
    reply = THINKS_A_MINUTE if not stream else Reply(THINKS_A_MINUTE.text, chunk_delay_s=5)
    llm_server.push(reply, "Thought: a retry would get this.\nFinal Answer: 1")
    trace = tmp_path / "trace.jsonl"
    command = [REACTSTEP, "ask", "What does main return?", "--project", "demo", "--server", url]
    command += ["--record", str(trace), *(["--stream"] if stream else [])]
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not llm_server.requests:  # the model has the step's request and sits on it
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "the model was never asked"
        time.sleep(0.01)
    time.sleep(0.2)  # the server's call is under way (for a stream: its headers are in)

    process.send_signal(signal.SIGINT)
    interrupted = time.monotonic()
    out, err = process.communicate(timeout=30)

    assert process.returncode == INTERRUPTED, (out, err)
    assert err.splitlines()[-1] == "interrupted"
    deadline = time.monotonic() + 10
    while not llm_server.closes:
        assert time.monotonic() < deadline, "the model server never saw its request closed"
        time.sleep(0.005)
    assert llm_server.closes[0] - interrupted < 1.0
    assert len(llm_server.requests) == 1  # no retry
    records = [json.loads(line) for line in trace.read_text().splitlines()]
    assert [record["kind"] for record in records] == ["session", "step_error"]
    assert records[-1]["response"] | {"message": ""} == {
        "status": 499, "code": "client_closed_request", "message": "", "stream": stream,
    }  # fmt: skip
    cancelled = 'reactstep_requests_cancelled_total{route="/api/agent/react_step"} 1.0'
    deadline = time.monotonic() + 10
    while cancelled not in httpx.get(f"{url}/metrics").text:
        assert time.monotonic() < deadline, "the server did not count the cancelled step"
        time.sleep(0.05)


def test_cancelling_an_async_run_closes_the_model_call_and_ends_its_trace(
    url: str, llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    llm_server.push(THINKS_A_MINUTE)
    trace = tmp_path / "trace.jsonl"

    async def main() -> float:
        async with AsyncClient(url) as client:
            run = asyncio.create_task(client.run("What does main return?", project="demo", trace=trace))
            while not llm_server.requests:
                await asyncio.sleep(0.01)
            await asyncio.sleep(0.2)
            run.cancel()
            cancelled = time.monotonic()
            with pytest.raises(asyncio.CancelledError):
                await run
            return cancelled

    cancelled = asyncio.run(main())

    deadline = time.monotonic() + 10
    while not llm_server.closes:
        assert time.monotonic() < deadline, "the model server never saw its request closed"
        time.sleep(0.005)
    assert llm_server.closes[0] - cancelled < 1.0
    records = [json.loads(line) for line in trace.read_text().splitlines()]
    assert [(record["kind"], record.get("response", {}).get("code")) for record in records] == [
        ("session", None),
        ("step_error", "client_closed_request"),
    ]
