"""A run that ends in an error is recorded (a `step_error` line, as trace.schema.json says) and replays
as a match: the real server on loopback, its LLM failing at step 2 with a 5xx, a timeout, or a stream
cut short; the library's run and `reactstep ask --record` write the same line."""

import json
import os
import subprocess
from importlib.resources import files
from pathlib import Path

import jsonschema
import pytest
from replay_helpers import QUESTION, SERVICE_KEY, TEXT_REPLIES, settings_for

from reactstep.client import Client
from reactstep.client.api.errors import ApiError
from reactstep.client.cli.main import main
from reactstep.client.replay import recorded_replies, replay
from reactstep.client.traces.format import load_trace
from reactstep.client.traces.scripted_llm import Fault, Reply, ScriptedLLMServer, ScriptItem
from reactstep.service.http.app import create_app
from reactstep.service.http.serving import BackgroundServer
from reactstep.tools.store.local import LocalStore
from tests.served import REACTSTEP

UNAVAILABLE = Fault(503, message="upstream down", retry_after="0", sticky=True)  # retries meet it too


def record_failing(
    server: str, llm: ScriptedLLMServer, trace: Path, second: ScriptItem, **options: object
) -> str:
    """Ask QUESTION with the LLM failing at step 2; the error code the run ended with."""
    llm.push(TEXT_REPLIES[0], second)
    with Client(server, SERVICE_KEY) as client, pytest.raises(ApiError) as raised:
        client.run(QUESTION, project="demo", trace=trace, **options)  # type: ignore[arg-type]
    return raised.value.code


def last_line(trace: Path) -> dict[str, object]:
    record = load_trace(trace)[-1]
    return {key: record[key] for key in ("kind", "step")} | {
        key: record["response"][key] for key in ("status", "code", "stream")
    }


def test_a_5xx_at_step_2_is_recorded_and_replays_as_a_match(
    server: str, llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    trace = tmp_path / "trace.jsonl"
    assert record_failing(server, llm_server, trace, UNAVAILABLE) == "llm_unavailable"
    assert last_line(trace) == {
        "kind": "step_error",
        "step": 2,
        "status": 503,
        "code": "llm_unavailable",
        "stream": False,
    }
    records = load_trace(trace)
    assert [r["kind"] for r in records] == ["session", "react_step", "execute_action", "step_error"]
    schema = json.loads(files("reactstep.client").joinpath("trace.schema.json").read_text())
    for line in records:
        jsonschema.validate(line, schema)
    with ScriptedLLMServer(recorded_replies(records)) as llm:
        report = replay(records, server, llm, api_key=SERVICE_KEY)
    assert (report.ok, report.steps, report.status) == (True, 2, "llm_unavailable"), report.explain()
    assert report.explain() == "replay matched: llm_unavailable after 2 steps"


def test_a_timeout_at_step_2_replays_as_the_servers_llm_timeout(
    llm_server: ScriptedLLMServer, local_store: LocalStore, tmp_path: Path
) -> None:
    trace = tmp_path / "trace.jsonl"
    impatient = settings_for(tmp_path / "server", llm_server, llm_timeout_s=0.3, llm_max_retries=0)
    with BackgroundServer(create_app(impatient, store=local_store)) as up:
        assert record_failing(up.url, llm_server, trace, Reply("Thought: slow", delay_s=1.0)) == "llm_timeout"
    assert last_line(trace)["code"] == "llm_timeout"
    records = load_trace(trace)
    replies = recorded_replies(records)
    assert replies[-1] == Fault(408, message=records[-1]["response"]["message"], retry_after="0", sticky=True)
    with (
        ScriptedLLMServer(replies) as llm,
        BackgroundServer(create_app(settings_for(tmp_path / "again", llm), store=local_store)) as up,
    ):
        report = replay(records, up.url, llm, api_key=SERVICE_KEY)
    assert (report.ok, report.steps, report.status) == (True, 2, "llm_timeout"), report.explain()


def test_a_stream_ended_by_an_error_event_replays_as_a_match_streamed_or_not(
    server: str, llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    trace = tmp_path / "trace.jsonl"
    cut = Reply("Thought: I should read the app.", chunk_chars=4, chunk_delay_s=0.02, cut_after_chunks=3)
    assert record_failing(server, llm_server, trace, cut, stream=True) == "llm_unavailable"
    assert last_line(trace) == {
        "kind": "step_error",
        "step": 2,
        "status": 200,
        "code": "llm_unavailable",
        "stream": True,
    }
    records = load_trace(trace)
    for stream in (True, False):
        with ScriptedLLMServer(recorded_replies(records)) as llm:
            report = replay(records, server, llm, api_key=SERVICE_KEY, stream=stream)
        assert (report.ok, report.steps, report.status) == (True, 2, "llm_unavailable"), report.explain()


def test_a_recorded_error_the_replay_does_not_meet_diverges_at_its_step(
    server: str, llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    trace = tmp_path / "trace.jsonl"
    record_failing(server, llm_server, trace, UNAVAILABLE)
    records = load_trace(trace)
    with ScriptedLLMServer(TEXT_REPLIES) as llm:  # the LLM answers step 2 this time
        report = replay(records, server, llm, api_key=SERVICE_KEY)
    assert (report.ok, report.diverged_at, report.part) == (False, 2, "call"), report.explain()
    assert report.message == "recorded step_error, replayed react_step"


def test_ask_record_writes_the_error_and_reactstep_replay_matches_it(
    server: str, llm_server: ScriptedLLMServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trace, report_path = tmp_path / "asked.jsonl", tmp_path / "report.json"
    llm_server.push(TEXT_REPLIES[0], UNAVAILABLE)
    argv = ["ask", QUESTION, "--project", "demo", "--server", server, "--record", str(trace)]
    assert main(argv) == 1
    assert capsys.readouterr().err.splitlines()[-1].startswith("error: 503 llm_unavailable: ")
    assert last_line(trace)["code"] == "llm_unavailable"
    argv = ["replay", str(trace), "--server", server, "--report", str(report_path), "--ignore-version"]
    assert main(argv) == 0
    assert capsys.readouterr().out == "replay matched: llm_unavailable after 2 steps\n"
    report = json.loads(report_path.read_text())
    assert (report["ok"], report["steps"], report["status"]) == (True, 2, "llm_unavailable")


def test_reactstep_replay_in_its_own_process_says_what_failed_not_a_bare_log_message(
    server: str, llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    """The replayed error is matched and said by the verdict; the warnings of the server in the command's
    process, meant for operators, are not printed (Python's last resort printed a bare `llm gave up`)."""
    trace = tmp_path / "trace.jsonl"
    record_failing(server, llm_server, trace, UNAVAILABLE)
    clean = {key: value for key, value in os.environ.items() if not key.startswith("REACTSTEP_")}
    env = clean | {"REACTSTEP_DATA_DIR": str(tmp_path), "HF_HUB_OFFLINE": "1"}  # the store of `demo`
    replayed = subprocess.run(
        [REACTSTEP, "replay", str(trace), "--ignore-version"],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert (replayed.returncode, replayed.stdout) == (0, "replay matched: llm_unavailable after 2 steps\n")
    assert replayed.stderr.splitlines() == [
        f"running in this process on {tmp_path} (no --server, and no `reactstep serve` runs on it)"
    ]
