"""Strict replay against the real server on loopback: green as recorded; a changed manifest, sampling
or observation stops it at the right step with the right part and its diff; --from-step N --live."""

import json
import re
from pathlib import Path

import pytest
from replay_helpers import SERVICE_KEY, Record, settings_for

from reactstep.client.cli.main import main
from reactstep.client.replay import recorded_replies, replay
from reactstep.client.traces.format import load_trace
from reactstep.client.traces.scripted_llm import Reply, ScriptedLLMServer, ToolCall
from reactstep.service.http.app import create_app
from reactstep.service.http.serving import BackgroundServer
from reactstep.tools.store.local import LocalStore

NATIVE_REPLIES = [
    Reply("Let me see the layout.", (ToolCall("list_files", '{"path": "", "recursive": true}'),)),
    Reply("The app is in src.", (ToolCall("read_file", '{"file_path": "src/app.py"}'),)),
    "Thought: main returns 42.\nFinal Answer: `main()` returns 42.",
]
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


def test_from_step_live_keeps_the_recorded_llm_config_and_says_the_mode(
    record: Record,
    server: str,
    llm_server: ScriptedLLMServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A native-mode trace with its own sampling goes on natively, with that sampling, and says so."""
    trace = record(NATIVE_REPLIES, llm={"tool_calling": "native", "temperature": 0.2})
    llm_server.push("Thought: I know enough.\nFinal Answer: it returns 42, live.")
    report_path = tmp_path / "report.json"
    argv = [
        "replay",
        str(trace),
        "--server",
        server,
        "--from-step",
        "2",
        "--live",
        "--report",
        str(report_path),
    ]
    assert main([*argv, "--ignore-version"]) == 0
    assert capsys.readouterr().out == (
        "replay matched: final_answer after 3 steps (the live LLM answered from step 3, in native mode)\n"
    )
    live_request = llm_server.requests[-1]
    assert (live_request["model"], live_request["temperature"], "tools" in live_request) == (
        "scripted",
        0.2,
        True,
    )
    report = json.loads(report_path.read_text())
    assert (report["live_from"], report["live_tool_calling"]) == (3, "native")


def test_a_server_that_refuses_the_replay_llm_is_named_with_what_to_do(
    record: Record, llm_server: ScriptedLLMServer, local_store: LocalStore, tmp_path: Path
) -> None:
    """A server without replay's scripted LLM on its allowlist: the error, its code and the remedy."""
    trace = record()
    strict = settings_for(tmp_path / "strict", llm_server).model_copy(update={"llm_api_base_allowlist": []})
    report_path = tmp_path / "report.json"
    with BackgroundServer(create_app(strict, store=local_store)) as up:
        argv = ["replay", str(trace), "--server", up.url, "--report", str(report_path), "--ignore-version"]
        assert main(argv) == 1
    report = json.loads(report_path.read_text())
    assert (report["diverged_at"], report["part"], report["message"]) == (
        1,
        "call",
        "recorded react_step, replayed step_error 403 api_base_not_allowed: llm_config.api_base is not on "
        "this server's allowlist (REACTSTEP_LLM_API_BASE_ALLOWLIST)",
    )
    [note] = report["notes"]
    assert re.sub(r"127\.0\.0\.1:\d+/v1", "127.0.0.1:PORT/v1", note) == (
        f"the server at {up.url} refused replay's own request: it must let a request name replay's scripted "
        "LLM on this machine (http://127.0.0.1:PORT/v1): set "
        "REACTSTEP_LLM_API_BASE_ALLOWLIST='[\"http://127.0.0.1:*\"]' where it runs, or replay without "
        "--server and REACTSTEP_SERVER (a server in this process allows it)"
    )


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
        f"using the server at {server} (--server)\n"
        "error: the trace started from version 999 of project 'demo', which this server's project has "
        "not reached (another server's, or one deleted and created again). Sync the files the trace "
        "started from (`reactstep sync DIR --project demo --force`), or pass --ignore-version\n"
    )
