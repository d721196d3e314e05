"""The reference client's approval flow against the real write tools: the diff is shown, the human (or
--approve-all, or the lack of a terminal) decides, the trace records both calls and the decision, and
replay reproduces the decision without asking."""

import io
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from reactstep.client.agent.approvals import QUESTION
from reactstep.client.agent.loop import REJECTED
from reactstep.client.cli.main import main
from reactstep.client.traces.scripted_llm import ScriptedLLMServer
from reactstep.service.http.app import create_app
from reactstep.service.http.serving import BackgroundServer
from reactstep.service.settings import Settings
from reactstep.tools.store.local import LocalStore

APP_PY = b"def main():\n    return 42\n"
DIFF = "--- a/src/app.py\n+++ b/src/app.py\n@@ -1,2 +1,2 @@\n def main():\n-    return 42\n+    return 43\n"
REPLIES = [
    'Thought: Make it 43.\nAction: replace_in_file(path="src/app.py", find="42", replace="43")',
    "Thought: Done.\nFinal Answer: main() returns 43 if the change was applied.",
]
WROTE = "Wrote src/app.py (+1 -1 lines)."
SHOWN = (
    "    Needs approval (nothing was written yet).\n    replace_in_file wants to make this change:\n"
    + "".join(f"    {line}\n" for line in DIFF.splitlines())
)
REFUSED = "    Rejected: nothing was written.\n"


class Terminal(io.StringIO):
    """What a person types on a terminal: a text stream that says it is a TTY."""

    def isatty(self) -> bool:
        return True


def serve(store: LocalStore, llm: ScriptedLLMServer, data_dir: Path) -> BackgroundServer:
    settings = Settings(
        data_dir=data_dir,
        llm_model="openai/scripted",
        llm_api_base=llm.base_url,
        llm_api_base_allowlist=["http://127.0.0.1:*"],
        approval_secret="client-approval-test-secret-0123456789",
    )
    return BackgroundServer(create_app(settings, store=store))


@pytest.fixture
def server(tmp_path: Path, llm_server: ScriptedLLMServer, local_store: LocalStore) -> Iterator[str]:
    with serve(local_store, llm_server, tmp_path) as running:
        yield running.url


@pytest.fixture
def fresh_server(tmp_path: Path, llm_server: ScriptedLLMServer) -> Iterator[str]:
    """Another server over an untouched copy of the project, to replay a write against."""
    store = LocalStore(tmp_path / "fresh-objects")
    store.put("demo", "src/app.py", APP_PY)
    with serve(store, llm_server, tmp_path / "fresh") as running:  # a vector store of its own
        yield running.url


CASES = {
    "--approve-all": (["--approve-all"], io.StringIO(""), True, f"{SHOWN}    Approved.\n"),
    "yes on a terminal": ([], Terminal("y\n"), True, f"{SHOWN}    {QUESTION}    Approved.\n"),
    "no on a terminal": ([], Terminal("n\n"), False, f"{SHOWN}    {QUESTION}{REFUSED}"),
    "enter on a terminal": ([], Terminal("\n"), False, f"{SHOWN}    {QUESTION}{REFUSED}"),
    "no terminal": (
        [],
        io.StringIO("y\n"),
        False,
        f"{SHOWN}    (stdin is not a terminal, so nobody can approve",
    ),
}


@pytest.mark.parametrize(("flags", "stdin", "approved", "asked"), CASES.values(), ids=CASES)
def test_a_write_waits_for_the_users_decision(
    server: str,
    fresh_server: str,
    llm_server: ScriptedLLMServer,
    local_store: LocalStore,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    flags: list[str],
    stdin: io.StringIO,
    approved: bool,
    asked: str,
) -> None:
    monkeypatch.setattr(sys, "stdin", stdin)
    llm_server.push(*REPLIES)
    trace = tmp_path / "trace.jsonl"
    assert (
        main(
            [
                "ask",
                "Make main return 43",
                "--project",
                "demo",
                "--server",
                server,
                "--record",
                str(trace),
                *flags,
            ]
        )
        == 0
    )
    printed = capsys.readouterr().out
    assert asked in printed
    assert local_store.get("demo", "src/app.py") == (APP_PY.replace(b"42", b"43") if approved else APP_PY)

    records = [json.loads(line) for line in trace.read_text().splitlines()]
    kinds = ["session", "react_step", "execute_action", "approval"]
    kinds += ["execute_action", "react_step"] if approved else ["react_step"]
    assert [record["kind"] for record in records] == kinds
    assert records[1]["response"]["action_details"]["requires_approval"] is True
    preview = records[2]["response"]
    assert (preview["approval"]["required"], preview["approval"]["diff"]) == (True, DIFF)
    assert records[3]["request"] == {
        "tool_name": "replace_in_file",
        "tool_args": {"path": "src/app.py", "find": "42", "replace": "43"},
        "diff": DIFF,
    }
    assert records[3]["response"] == {"approved": approved}
    observation = WROTE if approved else REJECTED
    if approved:
        assert records[4]["request"]["approval_token"] == preview["approval"]["token"]
        assert records[4]["response"]["observation"] == WROTE
    last_history = records[-1]["request"]["conversation_history"][-1]
    assert (last_history["observation"], last_history["is_error"]) == (observation, False)

    monkeypatch.setattr(sys, "stdin", Terminal(""))  # replay must not ask: nothing could answer
    assert main(["replay", str(trace), "--server", fresh_server]) == 0
    replayed = capsys.readouterr().out
    assert "replay matched: final_answer after 2 steps" in replayed
    assert "Apply this change?" not in replayed


def test_replay_fails_when_the_recording_has_no_decision(
    server: str,
    fresh_server: str,
    llm_server: ScriptedLLMServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    llm_server.push(*REPLIES)
    trace = tmp_path / "trace.jsonl"
    assert (
        main(
            [
                "ask",
                "Make it 43",
                "--project",
                "demo",
                "--server",
                server,
                "--record",
                str(trace),
                "--approve-all",
            ]
        )
        == 0
    )
    records: list[dict[str, Any]] = [json.loads(line) for line in trace.read_text().splitlines()]
    doctored = [record for record in records if record["kind"] != "approval"]
    trace.write_text("".join(json.dumps(record) + "\n" for record in doctored))
    capsys.readouterr()
    assert main(["replay", str(trace), "--server", fresh_server]) == 1
    assert capsys.readouterr().out == (
        "replay diverged at step 1: the server asks to approve replace_in_file, which the recording did not\n"
    )
