"""Strict replay against the real server on loopback: green as recorded; a changed manifest, sampling
or observation stops it at the right step with the right part and its diff; --from-step N --live."""

import json
from pathlib import Path

import pytest
from replay_helpers import SERVICE_KEY, Record

from reactstep.client.cli import main
from reactstep.client.replay import recorded_replies, replay
from reactstep.client.scripted_llm import ScriptedLLMServer
from reactstep.client.trace import load_trace
from reactstep.tools.store.local import LocalStore

LINT = {"name": "lint", "description": "Check a file for style problems.", "parameters": {"type": "object"}}


def test_a_recorded_trace_replays_strictly_green(record: Record, server: str, tmp_path: Path) -> None:
    trace = record()
    report_path = tmp_path / "report.json"
    argv = ["replay", str(trace), "--server", server, "--report", str(report_path), "--ignore-version"]
    assert main(argv) == 0
    report = json.loads(report_path.read_text())
    assert {key: report[key] for key in ("ok", "format", "steps", "diverged_at", "part", "diffs")} == {
        "ok": True,
        "format": 2,
        "steps": 3,
        "diverged_at": None,
        "part": None,
        "diffs": [],
    }


def test_a_changed_client_tool_description_diverges_at_step_1_in_the_manifest(
    record: Record, server: str
) -> None:
    records = load_trace(record(tools=[LINT]))
    changed = {**LINT, "description": "Check a file for lint problems."}
    with ScriptedLLMServer(recorded_replies(records)) as llm:
        report = replay(records, server, llm, api_key=SERVICE_KEY, client_tools=[changed])
    assert (report.ok, report.diverged_at, report.part) == (False, 1, "manifest"), report.explain()
    assert [diff.part for diff in report.diffs] == ["manifest", "system prompt"]
    manifest_diff = report.diffs[0].diff
    assert manifest_diff.startswith("--- recorded manifest\n+++ replayed manifest\n@@")
    assert "-  Check a file for style problems." in manifest_diff or "style problems" in manifest_diff
    assert any(line.startswith("+") and "lint problems" in line for line in manifest_diff.splitlines())
    assert report.explain().startswith("replay diverged at step 1: the LLM was asked another manifest\n")


def test_other_sampling_diverges_at_step_1_in_sampling(record: Record, server: str) -> None:
    records = load_trace(record(llm={"temperature": 0.2}))
    with ScriptedLLMServer(recorded_replies(records)) as llm:
        report = replay(records, server, llm, api_key=SERVICE_KEY, llm_overrides={"temperature": 0.7})
    assert (report.diverged_at, report.part) == (1, "sampling")
    assert '-  "temperature": 0.2' in report.diffs[0].diff or '- "temperature": 0.2' in report.diffs[0].diff
    assert '"temperature": 0.7' in report.diffs[0].diff


def test_a_changed_observation_diverges_at_the_step_that_read_it(
    record: Record, server: str, local_store: LocalStore, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trace = record()
    local_store.put("demo", "src/app.py", b"def main():\n    return 43\n")
    report_path = tmp_path / "report.json"
    argv = ["replay", str(trace), "--server", server, "--report", str(report_path), "--ignore-version"]
    assert main(argv) == 1
    printed = capsys.readouterr().out
    assert printed.startswith("replay diverged at step 2: observation of read_file differs\n")
    report = json.loads(report_path.read_text())
    assert (report["ok"], report["diverged_at"], report["part"], report["steps"]) == (
        False,
        2,
        "observation",
        2,
    )
    diff = report["diffs"][0]
    assert diff["part"] == "observation"
    assert "-    2 |     return 42" in diff["diff"] and "+    2 |     return 43" in diff["diff"]


@pytest.mark.parametrize("from_step", [1, 2])
def test_from_step_live_continues_with_the_configured_llm(
    from_step: int, record: Record, server: str, llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    trace = record()
    llm_server.push("Thought: I know enough.\nFinal Answer: it returns 42, live.")
    report_path = tmp_path / "report.json"
    argv = [
        "replay",
        str(trace),
        "--server",
        server,
        "--from-step",
        str(from_step),
        "--live",
        "--report",
        str(report_path),
    ]
    assert main([*argv, "--ignore-version"]) == 0
    report = json.loads(report_path.read_text())
    # The recorded steps up to from_step are replayed; the server's own LLM answers the next one.
    assert (report["ok"], report["steps"], report["live_from"], report["status"]) == (
        True,
        from_step + 1,
        from_step + 1,
        "final_answer",
    )
    assert llm_server.requests[-1]["model"] == "scripted"


def test_a_format_1_trace_replays_without_the_hash_checks_said_once(record: Record, server: str) -> None:
    records = load_trace(record())
    old = [{"kind": "session", **records[0], "version": 1}]
    for line in records[1:]:
        response = {key: value for key, value in line["response"].items() if key != "llm_request"}
        old.append({"kind": line["kind"], "request": line["request"], "response": response})
    with ScriptedLLMServer(recorded_replies(old)) as llm:
        report = replay(old, server, llm, api_key=SERVICE_KEY)
    assert (report.ok, report.format, report.steps) == (True, 1, 3)
    assert report.notes == ["recorded with trace format 1: the LLM requests are not compared"]


def test_usage_errors_exit_2(record: Record, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace = record()
    assert main(["replay", str(trace), "--live"]) == 2
    assert "--from-step N and --live go together" in capsys.readouterr().err
    future = tmp_path / "future.jsonl"
    future.write_text(json.dumps({"kind": "session", "version": 3}) + "\n")
    assert main(["replay", str(future)]) == 2
    assert "recorded with trace format 3, this reactstep reads 1, 2" in capsys.readouterr().err


def test_a_smaller_step_budget_diverges_in_the_message_that_says_it_is_the_last_step(
    record: Record, server: str
) -> None:
    records = load_trace(record())
    records[0]["max_iterations"] = 2  # step 2 is now the last: the prompt tells the model so
    with ScriptedLLMServer(recorded_replies(records)) as llm:
        report = replay(records, server, llm, api_key=SERVICE_KEY)
    assert (report.diverged_at, report.part) == (2, "message 3"), report.explain()
    assert report.diffs[0].diff.startswith("--- recorded message 3\n+++ replayed message 3\n@@")
    assert "\n+This is your last step: you cannot use another tool." in report.diffs[0].diff
    assert report.explain().startswith("replay diverged at step 2: the LLM was asked another message 3\n")


def test_a_trace_from_a_version_the_project_never_reached_says_what_is_known(
    record: Record, server: str, capsys: pytest.CaptureFixture[str]
) -> None:
    trace = record()
    lines = trace.read_text().splitlines()
    session = json.loads(lines[0])
    session["project_version"] = 999
    trace.write_text("\n".join([json.dumps(session), *lines[1:]]) + "\n")
    capsys.readouterr()
    assert main(["replay", str(trace), "--server", server]) == 1
    assert capsys.readouterr().err == (
        "error: the trace started from version 999 of project 'demo', which this server's project has "
        "not reached (another server's, or one deleted and created again). Sync the files the trace "
        "started from (`reactstep sync DIR --project demo --force`), or pass --ignore-version\n"
    )
