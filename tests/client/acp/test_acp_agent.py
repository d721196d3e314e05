"""`reactstep acp` driven as an editor drives it (the ACP SDK's client side over its stdio), against a
`reactstep serve` process and the scripted model: reads, a search, writes the person allows or rejects,
a cancel, a recorded session loaded again."""

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from acp import text_block
from acp.schema import ClientCapabilities

from reactstep.client.acp.turn_view import LOOP_STOPPED
from reactstep.client.agent.loop import REJECTED
from reactstep.client.traces.scripted_llm import Reply, ScriptedLLMServer
from tests.client.acp.editor import OFFERS, WITH_TERMINALS, Editor, started

READ = 'Thought: Let me read it.\nAction: read_file(file_path="src/app.py")'
GREP = 'Thought: Where is main?\nAction: grep(pattern="def main")'
EDIT = 'Thought: Make it 7.\nAction: edit_file(path="src/app.py", content="def main():\\n    return 7\\n")'
EDIT_AGAIN = 'Thought: Now 8.\nAction: edit_file(path="src/app.py", content="def main():\\n    return 8\\n")'


def answer(text: str) -> str:
    return f"Thought: Done.\nFinal Answer: {text}"


def ask(
    server_url: str,
    folder: Path,
    editor: Editor,
    *queries: str,
    offers: ClientCapabilities = OFFERS,
    options: tuple[str, ...] = (),
) -> tuple[str, list[str], dict[str, Any]]:
    """A new session on the folder and each query prompted in turn: the session id, the stop reasons
    and the new session's answer."""

    async def main() -> tuple[str, list[str], dict[str, Any]]:
        async with started(editor, server_url, offers, options) as conn:
            session = await conn.new_session(cwd=str(folder), mcp_servers=[])
            reasons = []
            for query in queries:
                done = await conn.prompt(session_id=session.session_id, prompt=[text_block(query)])
                reasons.append(done.stop_reason)
            return session.session_id, reasons, session.model_dump(mode="json", by_alias=True)

    return asyncio.run(main())


def stored(server_url: str, project_id: str, path: str) -> str:
    return httpx.get(f"{server_url}/api/projects/{project_id}/files/{path}", timeout=30).text


def test_a_read_sees_the_editors_unsaved_text_and_a_search_finds_it(
    server_url: str, model: ScriptedLLMServer, folder: Path
) -> None:
    model.push(READ, GREP, answer("main returns 43."))
    editor = Editor()
    editor.buffers[str(folder / "src" / "app.py")] = "def main():\n    return 43\n"  # unsaved
    _, reasons, session = ask(server_url, folder, editor, "What does main return?")
    assert reasons == ["end_turn"]
    assert editor.kinds() == [
        "agent_thought_chunk", "usage_update", "tool_call", "tool_call_update",
        "agent_thought_chunk", "usage_update", "tool_call", "tool_call_update",
        "agent_thought_chunk", "usage_update", "agent_message_chunk",
    ]  # fmt: skip
    read, search = editor.of_kind("tool_call")
    assert (read["kind"], read["title"], read["locations"]) == (
        "read", "read_file src/app.py", [{"path": str(folder / "src" / "app.py")}]
    )  # fmt: skip
    assert (search["kind"], search["title"], search["rawInput"]) == (
        "search",
        "grep def main",
        {"pattern": "def main"},
    )
    read_done, search_done = editor.of_kind("tool_call_update")
    assert read_done["status"] == "completed"
    assert "2 |     return 43" in read_done["content"][0]["content"]["text"]
    assert "src/app.py" in search_done["content"][0]["content"]["text"]
    assert editor.of_kind("agent_message_chunk")[0]["content"]["text"] == "main returns 43."
    usage = editor.of_kind("usage_update")[0]
    assert usage["used"] > 0 and usage["size"] == 32_768
    project = session["_meta"]["reactstep"]["project"]
    assert session["_meta"]["reactstep"]["mcpServersUnused"] == []
    files = httpx.get(f"{server_url}/api/projects/{project}", timeout=30).json()
    assert "notes.log" not in json.dumps(files)  # .gitignore honoured by the session's sync


def test_a_write_allowed_once_is_written_and_its_token_never_reaches_the_model(
    server_url: str, model: ScriptedLLMServer, folder: Path
) -> None:
    model.push(EDIT, answer("It returns 7 now."))
    first_request = len(model.requests)
    editor = Editor(answers=["allow_once"])
    session_id, reasons, session = ask(server_url, folder, editor, "Make main return 7.")
    assert reasons == ["end_turn"]
    [question] = editor.questions
    assert question["options"] == ["allow_once", "allow_always", "reject_once", "reject_always"]
    assert question["tool_call"]["kind"] == "edit"
    diff = next(update for update in editor.of_kind("tool_call_update") if update.get("status") == "pending")
    assert diff["content"][0] == {
        "type": "diff",
        "path": str(folder / "src" / "app.py"),
        "oldText": "def main():\n    return 42\n",
        "newText": "def main():\n    return 7\n",
    }
    project = session["_meta"]["reactstep"]["project"]
    assert stored(server_url, project, "src/app.py") == "def main():\n    return 7\n"
    assert editor.written == [(str(folder / "src" / "app.py"), "def main():\n    return 7\n")]
    trace = folder / ".reactstep" / "acp" / session_id / "turn-1.jsonl"
    token = next(
        line["request"]["approval_token"]
        for line in map(json.loads, trace.read_text().splitlines())
        if "approval_token" in line.get("request", {})
    )
    assert token not in json.dumps(model.requests[first_request:])


def test_without_the_editors_files_an_allowed_write_is_pulled_into_the_folder(
    server_url: str, model: ScriptedLLMServer, folder: Path
) -> None:
    model.push(EDIT, answer("It returns 7 now."))
    editor = Editor(answers=["allow_once"])
    _, reasons, _ = ask(server_url, folder, editor, "Make main return 7.", offers=ClientCapabilities())
    assert reasons == ["end_turn"]
    assert editor.written == []
    assert (folder / "src" / "app.py").read_text() == "def main():\n    return 7\n"
    said = editor.of_kind("tool_call_update")[-1]["content"][0]["content"]["text"]
    assert said.endswith("(pulled into the folder: 1 file(s))")


def test_a_write_rejected_writes_nothing(server_url: str, model: ScriptedLLMServer, folder: Path) -> None:
    model.push(EDIT, answer("Left as it was."))
    first_request = len(model.requests)
    editor = Editor(answers=["reject_once"])
    session_id, reasons, session = ask(server_url, folder, editor, "Make main return 7.")
    assert reasons == ["end_turn"]
    assert len(editor.questions) == 1
    project = session["_meta"]["reactstep"]["project"]
    assert stored(server_url, project, "src/app.py") == "def main():\n    return 42\n"
    assert (folder / "src" / "app.py").read_text() == "def main():\n    return 42\n"
    assert editor.written == []
    rejected = [update for update in editor.of_kind("tool_call_update") if update.get("status") == "failed"]
    assert rejected[0]["content"][0]["content"]["text"] == REJECTED
    assert REJECTED in json.dumps(model.requests[-1])
    assert len(model.requests) - first_request == 2
    trace = folder / ".reactstep" / "acp" / session_id / "turn-1.jsonl"
    calls = [
        line for line in map(json.loads, trace.read_text().splitlines()) if line["kind"] == "execute_action"
    ]
    assert [("approval_token" in call["request"]) for call in calls] == [False]  # the token was never sent


def test_allow_always_lets_the_sessions_next_write_through_unasked(
    server_url: str, model: ScriptedLLMServer, folder: Path
) -> None:
    model.push(EDIT, answer("7."), EDIT_AGAIN, answer("8."))
    editor = Editor(answers=["allow_always"])
    _, reasons, session = ask(server_url, folder, editor, "Make it 7.", "Now make it 8.")
    assert reasons == ["end_turn", "end_turn"]
    assert len(editor.questions) == 1  # the second write ran on the standing answer
    project = session["_meta"]["reactstep"]["project"]
    assert stored(server_url, project, "src/app.py") == "def main():\n    return 8\n"
    assert (folder / "src" / "app.py").read_text() == "def main():\n    return 8\n"
    # the second turn's first step was sent the first turn (question, steps, answer) before it
    second = next(request for request in model.requests if "Now make it 8." in json.dumps(request))
    assert {"role": "user", "content": "Make it 7."} in second["messages"]
    assert {"role": "assistant", "content": "7."} in second["messages"]


@pytest.mark.parametrize(
    ("reply", "stop_reason"),
    [
        (READ, "max_turn_requests"),  # the one step read; the budget was spent
        (Reply("Thought: a long", finish_reason="length"), "max_tokens"),  # the last reply was cut
    ],
)
def test_a_run_that_spends_its_steps_says_why_it_stopped(
    server_url: str, model: ScriptedLLMServer, folder: Path, reply: str | Reply, stop_reason: str
) -> None:
    model.push(reply)
    first_request = len(model.requests)
    _, reasons, _ = ask(
        server_url, folder, Editor(), "What does main return?", options=("--max-iterations", "1")
    )
    assert reasons == [stop_reason]
    assert len(model.requests) - first_request == 1  # the last step is answered without the model


def test_a_loop_the_server_stops_is_a_refusal_left_out_of_the_next_prompt(
    server_url: str, model: ScriptedLLMServer, folder: Path
) -> None:
    model.push(READ, READ, READ, READ, answer("42."))  # the fourth same read is not run: a loop
    editor = Editor()
    _, reasons, _ = ask(server_url, folder, editor, "Read it forever.", "What does main return?")
    assert reasons == ["refusal", "end_turn"]
    assert editor.of_kind("agent_message_chunk")[0]["content"]["text"] == LOOP_STOPPED
    assert "Read it forever." not in json.dumps(model.requests[-1])


def test_bash_runs_in_the_editors_terminal_once_the_person_allows_it(
    server_url: str, model: ScriptedLLMServer, folder: Path
) -> None:
    model.push('Thought: Count.\nAction: bash(command="ls src | wc -l")', answer("One file."))
    editor = Editor(answers=["allow_once"])
    _, reasons, _ = ask(server_url, folder, editor, "How many files in src?", offers=WITH_TERMINALS)
    assert reasons == ["end_turn"]
    assert editor.commands == [("bash", ["-c", "ls src | wc -l"], str(folder))]
    [question] = editor.questions
    assert (question["tool_call"]["kind"], question["tool_call"]["title"]) == (
        "execute",
        "bash ls src | wc -l",
    )
    assert editor.of_kind("tool_call_update")[0]["content"] == [{"type": "terminal", "terminalId": "term-1"}]
    assert editor.of_kind("tool_call_update")[-1]["content"][0]["content"]["text"] == "1\nExit code: 0"
    assert "1\nExit code: 0" in model.requests[-1]["messages"][-1]["content"]


def test_a_cancel_closes_the_models_stream_and_the_prompt_answers_cancelled_within_a_second(
    server_url: str, model: ScriptedLLMServer, folder: Path
) -> None:
    words = 400
    model.push(Reply("Thought: " + "word " * words + "\nFinal Answer: x", chunk_chars=5, chunk_delay_s=0.01))
    streams_before = len(model.streams)
    editor = Editor()

    async def main() -> tuple[str, float]:
        async with started(editor, server_url) as conn:
            session = await conn.new_session(cwd=str(folder), mcp_servers=[])
            prompt = asyncio.create_task(
                conn.prompt(session_id=session.session_id, prompt=[text_block("Go.")])
            )
            while not editor.of_kind("agent_thought_chunk"):
                await asyncio.sleep(0.01)
            cancelled_at = time.monotonic()
            await conn.cancel(session_id=session.session_id)
            done = await prompt
            return done.stop_reason, time.monotonic() - cancelled_at

    reason, latency = asyncio.run(main())
    assert reason == "cancelled"
    assert latency < 1.0
    deadline = time.monotonic() + 30  # a wait for the record, not a measure: the latency is asserted above
    while len(model.streams) == streams_before and time.monotonic() < deadline:
        time.sleep(0.01)
    [record] = model.streams[streams_before:]
    assert record.outcome == "disconnected"
    assert record.chunks_sent < words


def test_a_recorded_session_loads_into_the_editors_view_and_goes_on(
    server_url: str, model: ScriptedLLMServer, folder: Path
) -> None:
    model.push(READ, answer("It returns 42."))
    session_id, _, _ = ask(server_url, folder, Editor(), "What does main return?")
    model.push(answer("Still 42."))
    editor = Editor()

    async def main() -> str:
        async with started(editor, server_url) as conn:
            await conn.load_session(cwd=str(folder), session_id=session_id, mcp_servers=[])
            loaded = len(editor.updates)
            done = await conn.prompt(session_id=session_id, prompt=[text_block("And now?")])
            del editor.updates[loaded:]
            return done.stop_reason

    assert asyncio.run(main()) == "end_turn"
    assert editor.kinds() == [
        "user_message_chunk", "agent_thought_chunk", "usage_update", "tool_call", "tool_call_update",
        "agent_thought_chunk", "usage_update", "agent_message_chunk",
    ]  # fmt: skip
    assert editor.updates[0]["content"]["text"] == "What does main return?"
    assert editor.of_kind("agent_message_chunk")[0]["content"]["text"] == "It returns 42."
    assert "What does main return?" in json.dumps(model.requests[-1])  # the loaded conversation went on
