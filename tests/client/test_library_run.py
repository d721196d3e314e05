"""`Client.run` and `AsyncClient.run` against the real server on loopback, a scripted LLM behind it:
a server tool through execute_action, a client tool through on_action, a write through approve,
the trace written in the format `reactstep replay` reads; and stream_step's typed events."""

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from reactstep.client import REJECTED, ApprovalRequest, AsyncClient, Client
from reactstep.client.api.wire import StepResult, ThoughtEvent
from reactstep.client.cli.main import main
from reactstep.client.traces.format import load_trace
from reactstep.client.traces.scripted_llm import ScriptedLLMServer
from reactstep.contract.step import ClientTool, ReactStepRequest
from reactstep.service.http.app import create_app
from reactstep.service.http.serving import BackgroundServer
from reactstep.service.settings import Settings
from reactstep.tools.store.local import LocalStore

REPLIES = [
    'Thought: Read it first.\nAction: read_file(path="src/app.py")',
    'Thought: Lint it here.\nAction: lint(path="src/app.py")',
    'Thought: Make it 43.\nAction: replace_in_file(path="src/app.py", find="42", replace="43")',
    "Thought: Done.\nFinal Answer: main() returns 43 now.",
]
DIFF = "--- a/src/app.py\n+++ b/src/app.py\n@@ -1,2 +1,2 @@\n def main():\n-    return 42\n+    return 43\n"
LINT = ClientTool(
    name="lint",
    description="Lint one file on the user's machine.",
    parameters={"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)
KINDS = [
    "session",
    "react_step",
    "execute_action",
    "react_step",
    "client_action",
    "react_step",
    "execute_action",
    "approval",
    "execute_action",
    "react_step",
]


@pytest.fixture
def server(tmp_path: Path, llm_server: ScriptedLLMServer, local_store: LocalStore) -> Iterator[str]:
    settings = Settings(
        data_dir=tmp_path,
        llm_model="openai/scripted",
        llm_api_base=llm_server.base_url,
        llm_api_base_allowlist=["http://127.0.0.1:*"],
        approval_secret="library-run-test-secret-0123456789abcdef",
    )
    with BackgroundServer(create_app(settings, store=local_store)) as running:
        yield running.url


def check_run(result: Any, asked: list[Any], approvals: list[ApprovalRequest], trace: Path) -> None:
    assert (result.status, result.answer, result.steps) == ("final_answer", "main() returns 43 now.", 4)
    assert "return 42" in result.history[0]["observation"]
    assert result.history[1]["observation"] == "lint: src/app.py is clean"
    assert result.history[2] == {
        "thought": "Make it 43.",
        "action_details": result.history[2]["action_details"],
        "observation": "Wrote src/app.py (+1 -1 lines).",
        "is_error": False,
    }
    assert asked == [("lint", {"path": "src/app.py"})]
    assert [(call.tool_name, call.diff) for call in approvals] == [("replace_in_file", DIFF)]
    records = load_trace(trace)
    assert [record["kind"] for record in records] == KINDS
    assert records[0]["project_version"] == 0 and records[0]["user_query"] == "make main return 43"
    assert records[0]["client_tools"][0]["name"] == "lint"
    assert records[7] == {
        "kind": "approval",
        "step": 3,
        "at_ms": records[7]["at_ms"],
        "request": {"tool_name": "replace_in_file", "tool_args": approvals[0].tool_args, "diff": DIFF},
        "response": {"approved": True},
    }


def test_run_drives_server_tools_client_tools_and_approvals(
    server: str, llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    llm_server.push(*REPLIES)
    asked: list[Any] = []
    approvals: list[ApprovalRequest] = []

    def lint(tool_name: str, tool_args: dict[str, Any]) -> str:
        asked.append((tool_name, tool_args))
        return f"lint: {tool_args['path']} is clean"

    def approve(call: ApprovalRequest) -> bool:
        approvals.append(call)
        return True

    with Client(server) as rs:
        result = rs.run(
            "make main return 43",
            project="demo",
            tools=[LINT],
            on_action=lint,
            approve=approve,
            trace=tmp_path / "run.jsonl",
        )
        found = rs.projects.download("demo", "src/app.py")
    assert found is not None and found[0] == b"def main():\n    return 43\n"
    check_run(result, asked, approvals, tmp_path / "run.jsonl")


def test_async_run_awaits_async_callbacks(server: str, llm_server: ScriptedLLMServer, tmp_path: Path) -> None:
    llm_server.push(*REPLIES)
    asked: list[Any] = []
    approvals: list[ApprovalRequest] = []

    async def lint(tool_name: str, tool_args: dict[str, Any]) -> dict[str, Any]:
        await asyncio.sleep(0)
        asked.append((tool_name, tool_args))
        return {"observation": f"lint: {tool_args['path']} is clean", "is_error": False}

    async def approve(call: ApprovalRequest) -> bool:
        await asyncio.sleep(0)
        approvals.append(call)
        return True

    async def main() -> Any:
        async with AsyncClient(server) as rs:
            return await rs.run(
                "make main return 43",
                project="demo",
                tools=[LINT],
                on_action=lint,
                approve=approve,
                trace=tmp_path / "run.jsonl",
            )

    check_run(asyncio.run(main()), asked, approvals, tmp_path / "run.jsonl")


def test_a_write_nobody_approves_is_refused_and_nothing_is_written(
    server: str, llm_server: ScriptedLLMServer
) -> None:
    llm_server.push(REPLIES[2], REPLIES[3])
    with Client(server) as rs:
        result = rs.run("make main return 43", project="demo")
        assert result.history[0]["observation"] == REJECTED
        found = rs.projects.download("demo", "src/app.py")
        assert found is not None and found[0] == b"def main():\n    return 42\n"


def test_a_misspelt_option_is_refused_before_any_call(server: str, llm_server: ScriptedLLMServer) -> None:
    with Client(server) as rs, pytest.raises(TypeError, match=r"unknown options \['aprove'\]"):
        rs.run("make main return 43", project="demo", aprove=lambda change: True)  # type: ignore[call-arg]
    assert llm_server.requests == []


def test_a_client_tool_nobody_runs_is_an_error_observation(
    server: str, llm_server: ScriptedLLMServer
) -> None:
    llm_server.push(REPLIES[1], REPLIES[3])
    with Client(server) as rs:
        result = rs.run("lint it", project="demo", tools=[LINT], max_steps=3)
    assert result.history[0]["observation"] == "Error: this client has no tool 'lint'"
    assert result.history[0]["is_error"] is True


def step_request() -> ReactStepRequest:
    return ReactStepRequest(project_id="demo", session_id="s-1", user_query="what does main return?")


def test_stream_step_yields_typed_thought_events_then_the_result(
    server: str, llm_server: ScriptedLLMServer
) -> None:
    llm_server.push("Thought: It returns 42, as src/app.py says.\nFinal Answer: 42")
    with Client(server) as rs:
        events = list(rs.stream_step(step_request()))
    assert isinstance(events[-1], StepResult)
    assert (events[-1].response.status, events[-1].response.final_answer) == ("final_answer", "42")
    thoughts = [event for event in events[:-1] if isinstance(event, ThoughtEvent)]
    assert len(thoughts) == len(events) - 1 >= 1
    assert "".join(event.delta for event in thoughts).strip() == events[-1].response.thought


def test_async_stream_step_and_step(server: str, llm_server: ScriptedLLMServer) -> None:
    llm_server.push("Thought: Streamed.\nFinal Answer: 42", "Thought: Whole.\nFinal Answer: 43")

    async def main() -> tuple[list[Any], Any]:
        async with AsyncClient(server) as rs:
            events = [event async for event in rs.stream_step(step_request())]
            return events, await rs.step(step_request())

    events, whole = asyncio.run(main())
    assert isinstance(events[-1], StepResult) and events[-1].response.final_answer == "42"
    assert (whole.status, whole.final_answer, whole.thought) == ("final_answer", "43", "Whole.")


def test_reactstep_replay_reads_the_trace_run_writes(
    server: str, llm_server: ScriptedLLMServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    llm_server.push(REPLIES[0], REPLIES[3])
    with Client(server) as rs:
        result = rs.run("what does main return?", project="demo", trace=tmp_path / "run.jsonl")
    assert (result.status, result.steps) == ("final_answer", 2)
    assert main(["replay", str(tmp_path / "run.jsonl"), "--server", server]) == 0
    assert "replay matched: final_answer after 2 steps" in capsys.readouterr().out


def test_what_a_callback_raises_reaches_the_caller_and_the_trace_is_complete_so_far(
    server: str, llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    llm_server.push(REPLIES[1])

    def broken(tool_name: str, tool_args: dict[str, Any]) -> str:
        raise RuntimeError("lint crashed")

    with Client(server) as rs, pytest.raises(RuntimeError, match="lint crashed"):
        rs.run("lint it", project="demo", tools=[LINT], on_action=broken, trace=tmp_path / "run.jsonl")
    assert [record["kind"] for record in load_trace(tmp_path / "run.jsonl")] == ["session", "react_step"]
