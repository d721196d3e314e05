"""`reactstep view`: the page written for a recorded trace holds each step and nothing it should not
(no approval token, no history, no way for a recorded text to end the data block); a report is checked."""

import json
import re
from pathlib import Path
from typing import Any

import pytest

from reactstep.client import Client
from reactstep.client.cli.main import main
from reactstep.client.traces.format import load_trace, trace_cost
from reactstep.client.traces.viewer import page_data, render
from reactstep.tools.store.local import LocalStore
from tests.viewer.conftest import HOSTILE, LONG_FILE, REPLIES, serving

REPORT = {
    "ok": False,
    "diverged_at": 2,
    "message": "Step 2 asked the model something else.",
    "diffs": [
        {"part": "system prompt", "diff": "--- recorded\n+++ replayed\n@@ -1 +1 @@\n-Be brief.\n+Be terse.\n"}
    ],
}


def embedded(page: str) -> Any:
    block = re.search(r'<script type="application/json" id="trace-data">(.*?)</script>', page, re.S)
    assert block is not None
    return json.loads(block.group(1))


def test_the_page_holds_each_step_as_recorded(recorded_trace: Path) -> None:
    data = page_data(recorded_trace)
    steps = data["steps"]
    assert [(step["n"], step["status"], step["tool"], step["executor"]) for step in steps] == [
        (1, "action_proposed", "read_file", "server"),
        (2, "action_proposed", "lint", "client"),
        (3, "action_proposed", "replace_in_file", "server"),
        (4, "final_answer", None, None),
    ]
    assert [step["thought"] for step in steps] == ["Read it first.", "Lint it here.", "Make it 43.", "Done."]
    assert steps[0]["args"] == {"file_path": "src/app.py"}
    assert steps[0]["calls"][0]["observation"].startswith("File: src/app.py (62 lines)\n    1 | def main():")
    assert steps[1]["calls"] == [
        {
            "kind": "client_action",
            "tool": "lint",
            "observation": HOSTILE,
            "is_error": False,
            "approved_call": False,
            "needs_approval": False,
            "ms": None,
        }
    ]
    assert [
        (call["kind"], call.get("needs_approval"), call.get("approved")) for call in steps[2]["calls"]
    ] == [
        ("execute_action", True, None),
        ("approval", None, True),
        ("execute_action", False, None),
    ]
    assert steps[2]["calls"][2]["observation"] == "Wrote src/app.py (+1 -1 lines)."
    assert steps[3]["final_answer"] == "main() returns 43 now."
    assert all(step["tokens"]["prompt"] > 0 and step["ms"]["step"] > 0 for step in steps)
    assert (data["project_id"], data["project_version"], data["query"]) == ("demo", 0, "make main return 43")
    assert data["reactstep_version"] == load_trace(recorded_trace)[0]["reactstep_version"]
    assert data["warnings"] == [] and data["report"] is None


def test_the_embedded_data_cannot_end_its_script_block(recorded_trace: Path) -> None:
    page = render(page_data(recorded_trace))
    assert page.count("</script>") == 2  # the data block's and the page script's own
    assert "<!--" not in page
    assert embedded(page) == page_data(recorded_trace)


def test_keys_tokens_and_history_stay_out_of_the_page(recorded_trace: Path) -> None:
    records = load_trace(recorded_trace)
    approvals = [record["response"].get("approval") for record in records[1:]]
    token = next(approval["token"] for approval in approvals if approval)
    assert len(token) > 40
    page = render(page_data(recorded_trace))
    assert token not in page
    assert "conversation_history" not in page
    # the 62-line read is in the page twice (its observation, and the history message the next step
    # asked the model with), not again in each later step's history
    assert page.count("# line 59") == 2


def test_what_the_model_was_asked_is_embedded_once_per_text(recorded_trace: Path) -> None:
    records = load_trace(recorded_trace)
    asked = [record["response"]["llm_request"] for record in records if record["kind"] == "react_step"]
    data = page_data(recorded_trace)
    assert [step["asked"] for step in data["steps"]] == [
        [{"part": part, "sha256": digest} for part, digest in request["parts"].items()] for request in asked
    ]
    rendered = {
        request["parts"][part]: text for request in asked for part, text in request["rendered"].items()
    }
    assert data["texts"] == rendered
    system_prompt = asked[0]["rendered"]["system prompt"]
    assert {request["parts"]["system prompt"] for request in asked} == {asked[0]["parts"]["system prompt"]}
    assert json.dumps(data).count(json.dumps(system_prompt)[1:-1]) == 1


def test_view_writes_next_to_the_trace_and_prints_where(
    recorded_trace: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trace = tmp_path / "run.jsonl"
    trace.write_bytes(recorded_trace.read_bytes())
    assert main(["view", str(trace)]) == 0
    assert capsys.readouterr().out == f"{tmp_path / 'run.html'}\n"
    assert embedded((tmp_path / "run.html").read_text())["steps"] == page_data(trace)["steps"]


def test_view_with_a_report_and_an_output_path(
    recorded_trace: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "report.json"
    report.write_text(json.dumps({**REPORT, "replayed_by": "a later replay"}))
    out = tmp_path / "pages" / "page.html"
    out.parent.mkdir()
    assert main(["view", str(recorded_trace), "--report", str(report), "-o", str(out)]) == 0
    assert capsys.readouterr().out == f"{out}\n"
    assert embedded(out.read_text())["report"] == REPORT


def test_a_report_that_is_not_one_is_refused(
    recorded_trace: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "report.json"
    report.write_text(json.dumps({"ok": False, "diverged_at": "two"}))
    assert main(["view", str(recorded_trace), "--report", str(report), "-o", str(tmp_path / "x.html")]) == 1
    assert capsys.readouterr().err == (
        f"error: {report} is not a replay report: diverged_at: "
        "Input should be a valid integer, unable to parse string as an integer\n"
    )
    assert not (tmp_path / "x.html").exists()


def test_a_file_that_is_not_a_trace_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    notes = tmp_path / "notes.jsonl"
    notes.write_text('{"kind": "react_step"}\n')
    assert main(["view", str(notes)]) == 1
    assert capsys.readouterr().err == f"error: {notes} is not a reactstep trace (no session line first)\n"
    assert main(["view", str(tmp_path / "missing.jsonl")]) == 1
    assert "missing.jsonl" in capsys.readouterr().err


def test_a_trace_cut_short_or_of_another_format_is_shown_with_a_warning(
    recorded_trace: Path, tmp_path: Path
) -> None:
    lines = recorded_trace.read_text().splitlines()
    header = {**json.loads(lines[0]), "version": 99}
    trace = tmp_path / "torn.jsonl"
    trace.write_text("\n".join([json.dumps(header), *lines[1:3], lines[3][:40]]) + "\n")
    data = page_data(trace)
    assert [(step["tool"], len(step["calls"])) for step in data["steps"]] == [("read_file", 1)]
    assert data["warnings"] == [
        "line 4 is not JSON (a run cut short?); it is left out",
        "recorded with trace format 99, this viewer reads 1, 2: some parts may be missing",
    ]


SESSION = {"kind": "session", "version": 2, "project_id": "demo", "session_id": "s", "user_query": "q"}
READ = {
    "kind": "react_step",
    "request": {},
    "response": {"status": "action_proposed", "action_details": {"tool_name": "read_file", "tool_args": {}}},
}
READ_ANSWER = {
    "kind": "execute_action",
    "step": 1,
    "request": {"tool_name": "read_file"},
    "response": {"observation": "42", "is_error": False},
}
REFUSED = {
    "kind": "step_error",
    "step": 2,
    "request": {},
    "response": {
        "status": 403,
        "code": "api_base_not_allowed",
        "message": "llm_config.api_base is not on this server's allowlist",
        "stream": False,
    },
}
CUT = {
    "kind": "step_error",
    "step": 1,
    "request": {},
    "response": {"status": 200, "code": "llm_unavailable", "message": "the stream was cut", "stream": True},
}


@pytest.mark.parametrize(
    ("records", "shown"),
    [
        (
            [CUT],
            [
                (
                    1,
                    "step_error",
                    "200 llm_unavailable: the stream was cut (an error event ended the stream)",
                    0,
                )
            ],
        ),
        (
            [READ, READ_ANSWER, REFUSED],
            [
                (1, "action_proposed", None, 1),
                (
                    2,
                    "step_error",
                    "403 api_base_not_allowed: llm_config.api_base is not on this server's allowlist",
                    0,
                ),
            ],
        ),
    ],
    ids=["only an error", "an error after a step"],
)
def test_a_step_error_is_a_step_of_its_own(
    records: list[dict[str, Any]], shown: list[tuple[int, str, str | None, int]], tmp_path: Path
) -> None:
    trace = tmp_path / "trace.jsonl"
    trace.write_text("".join(json.dumps(record) + "\n" for record in [SESSION, *records]))
    steps = page_data(trace)["steps"]
    assert [(step["n"], step["status"], step["error"], len(step["calls"])) for step in steps] == shown


def test_a_run_on_a_priced_model_sums_its_cost_in_the_result_the_trace_and_the_page(tmp_path: Path) -> None:
    store = LocalStore(tmp_path / "objects")
    store.put("demo", "src/app.py", LONG_FILE)
    server_tools_only = [reply for reply in REPLIES if "lint(" not in reply]
    with serving(tmp_path, store, server_tools_only) as url, Client(url) as client:
        result = client.run(
            "make main return 43",
            project="demo",
            llm={"model": "openai/gpt-4o-mini"},  # priced in litellm's table; the scripted server answers
            approve=lambda call: True,
            trace=tmp_path / "trace.jsonl",
        )
    records = load_trace(tmp_path / "trace.jsonl")
    usages = [record["response"]["usage"] for record in records if record["kind"] == "react_step"]
    each = [usage["prompt_tokens"] * 0.15e-6 + usage["completion_tokens"] * 0.6e-6 for usage in usages]
    assert [usage["cost_usd"] for usage in usages] == pytest.approx(each, abs=1e-12)
    assert result.cost_usd == pytest.approx(sum(each), abs=1e-8)
    cost = trace_cost(records)
    assert (cost.total_usd(), cost.priced_steps, cost.unpriced_steps) == (result.cost_usd, 3, 0)
    data = page_data(tmp_path / "trace.jsonl")
    assert data["cost"] == {"usd": result.cost_usd, "unpriced_steps": 0}
    assert [step["cost_usd"] for step in data["steps"]] == [usage["cost_usd"] for usage in usages]


def test_a_run_on_an_unpriced_model_says_so(recorded_trace: Path) -> None:
    data = page_data(recorded_trace)
    assert data["cost"] == {"usd": None, "unpriced_steps": 4}
    assert [step["cost_usd"] for step in data["steps"]] == [None] * 4
