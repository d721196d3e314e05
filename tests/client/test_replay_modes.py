"""One recorded trace replays in either tool-calling mode; `ask --stream` shows the thought as it comes."""

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from reactstep.client.cli.main import main
from reactstep.client.replay import recorded_replies, replay
from reactstep.client.traces.format import load_trace
from reactstep.client.traces.scripted_llm import Reply, ScriptedLLMServer, ScriptItem, ToolCall
from reactstep.service.http.app import create_app
from reactstep.service.http.serving import BackgroundServer
from reactstep.service.settings import Settings
from reactstep.tools.store.local import LocalStore

QUESTION = "What does main return?"
FINAL = "Thought: main returns 42.\nFinal Answer: `main()` returns 42."
TEXT_REPLIES: list[ScriptItem] = [
    'Thought: Let me see the layout.\nAction: list_files(path="", recursive=true)',
    "I am not sure yet.",
    'Thought: The app is in src.\nAction: read_file(file_path="src/app.py")',
    FINAL,
]
NATIVE_REPLIES: list[ScriptItem] = [
    Reply("Let me see the layout.", (ToolCall("list_files", '{"path": "", "recursive": true}'),)),
    "I am not sure yet.",
    Reply("The app is in src.", (ToolCall("read_file", '{"file_path": "src/app.py"}'),)),
    FINAL,
]
KINDS = [
    "session",
    "react_step",
    "execute_action",
    "react_step",
    "react_step",
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
    )
    with BackgroundServer(create_app(settings, store=local_store)) as running:
        yield running.url


@pytest.mark.parametrize(
    ("recorded_in", "replies", "replayed_in"),
    [
        ("text", TEXT_REPLIES, "native"),
        ("native", NATIVE_REPLIES, "text"),
        ("text", TEXT_REPLIES, "text"),
        ("native", NATIVE_REPLIES, "native"),
    ],
)
def test_a_trace_replays_in_either_mode(
    server: str,
    llm_server: ScriptedLLMServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    recorded_in: str,
    replies: list[ScriptItem],
    replayed_in: str,
) -> None:
    llm_server.push(*replies)
    trace = tmp_path / "trace.jsonl"
    ask = ["ask", QUESTION, "--project", "demo", "--server", server, "--record", str(trace)]
    assert main([*ask, "--tool-calling", recorded_in]) == 0
    records = load_trace(trace)
    assert [record["kind"] for record in records] == KINDS
    steps = [record["response"] for record in records if record["kind"] == "react_step"]
    assert [step["status"] for step in steps] == [
        "action_proposed",
        "format_error",
        "action_proposed",
        "final_answer",
    ]
    assert {step["tool_calling"] for step in steps} == {recorded_in}
    assert ("tools" in llm_server.requests[0]) is (recorded_in == "native")

    with ScriptedLLMServer(recorded_replies(records)) as replay_llm:
        report = replay(records, server, replay_llm, tool_calling=replayed_in)
        assert (report.ok, report.status, report.steps) == (True, "final_answer", 4), report.explain()
        assert {"tools" in request for request in replay_llm.requests} == {replayed_in == "native"}
    capsys.readouterr()
    assert main(["replay", str(trace), "--server", server, "--tool-calling", replayed_in]) == 0
    assert "replay matched: final_answer after 4 steps" in capsys.readouterr().out


def test_ask_streams_the_thought_and_records_the_final_body(
    server: str, llm_server: ScriptedLLMServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    llm_server.push(
        *[Reply(reply, chunk_chars=3) if isinstance(reply, str) else reply for reply in TEXT_REPLIES]
    )
    trace = tmp_path / "trace.jsonl"
    ask = ["ask", QUESTION, "--project", "demo", "--server", server, "--record", str(trace), "--stream"]
    assert main(ask) == 0
    printed = capsys.readouterr().out
    assert "    Thought: Let me see the layout.\n[1] action_proposed\n" in printed
    assert "    Thought: I am not sure yet.\n[2] format_error\n" in printed
    assert "Final Answer: `main()` returns 42." in printed
    records = [json.loads(line) for line in trace.read_text().splitlines()]
    assert records[0]["stream"] is True
    assert records[1]["request"]["stream"] is True
    assert records[1]["response"]["thought"] == "Let me see the layout."
    assert all(request["stream"] for request in llm_server.requests)
    assert main(["replay", str(trace), "--server", server]) == 0
    assert "replay matched: final_answer after 4 steps" in capsys.readouterr().out
