"""A trace whose history had to be fitted to a small context window replays on replay's scripted model
(another window, another tokenizer) as recorded: each replayed step pins the recorded prompt_fit."""

import json
from collections.abc import Iterator
from importlib.resources import files
from pathlib import Path

import jsonschema
import pytest
from replay_helpers import QUESTION, SERVICE_KEY, TEXT_REPLIES, settings_for

from reactstep.client import Client
from reactstep.client.cli.main import main
from reactstep.client.replay import recorded_replies, replay
from reactstep.client.traces.format import load_trace
from reactstep.client.traces.scripted_llm import ScriptedLLMServer
from reactstep.service.http.app import create_app
from reactstep.service.http.serving import BackgroundServer
from reactstep.tools.store.local import LocalStore

SMALL_WINDOW = 1800  # the system prompt is ~1,400 tokens: steps 2 and 3 elide and leave out history
ELIDED = "was elided to fit the context window"


@pytest.fixture
def fitted_trace(tmp_path: Path, llm_server: ScriptedLLMServer, local_store: LocalStore) -> Iterator[Path]:
    """QUESTION asked of a server whose model has a 1,800-token window, recorded."""
    settings = settings_for(tmp_path / "small", llm_server, llm_default_context_window=SMALL_WINDOW)
    with BackgroundServer(create_app(settings, store=local_store)) as small:
        llm_server.push(*TEXT_REPLIES)
        trace = tmp_path / "trace.jsonl"
        with Client(small.url, SERVICE_KEY) as client:
            assert client.run(QUESTION, project="demo", trace=trace).status == "final_answer"
    yield trace


def test_a_fitted_trace_records_how_each_step_was_fitted(fitted_trace: Path) -> None:
    records = load_trace(fitted_trace)
    schema = json.loads(files("reactstep.client").joinpath("trace.schema.json").read_text())
    for record in records:
        jsonschema.validate(record, schema)
    steps = [record["response"] for record in records if record["kind"] == "react_step"]
    assert [step.get("prompt_fit") for step in steps] == [
        None,
        {"window": SMALL_WINDOW, "elided": 1, "left_out": 1},
        {"window": SMALL_WINDOW, "elided": 2, "left_out": 2},
    ]


def test_a_fitted_trace_replays_as_recorded_on_the_default_window(
    fitted_trace: Path, server: str, tmp_path: Path
) -> None:
    report_path = tmp_path / "report.json"
    argv = ["replay", str(fitted_trace), "--server", server, "--report", str(report_path), "--ignore-version"]
    assert main(argv) == 0
    report = json.loads(report_path.read_text())
    assert (report["ok"], report["steps"], report["diverged_at"], report["diffs"]) == (True, 3, None, [])


def test_the_same_trace_without_its_fits_diverges_where_the_history_was_fitted(
    fitted_trace: Path, server: str
) -> None:
    """What a replay met before steps said how they were fitted: the scripted model's window fits
    nothing, so step 2's system prompt lacks the recorded notices."""
    records = load_trace(fitted_trace)
    for record in records:
        record.get("response", {}).pop("prompt_fit", None)
    with ScriptedLLMServer(recorded_replies(records)) as llm:
        report = replay(records, server, llm, api_key=SERVICE_KEY)
    assert (report.ok, report.diverged_at, report.part) == (False, 2, "system prompt"), report.explain()
    assert "\n-Note: the 1 oldest step of this conversation was left out to fit your context window." in (
        report.diffs[0].diff
    )


def test_from_step_live_pins_the_replayed_steps_only(
    fitted_trace: Path, server: str, llm_server: ScriptedLLMServer
) -> None:
    """Step 1 is replayed; step 2, answered live on the default window, is fitted by counting: its
    history is sent whole, not as recorded."""
    records = load_trace(fitted_trace)
    llm_server.push("Thought: I know enough.\nFinal Answer: it returns 42, live.")
    with ScriptedLLMServer(recorded_replies(records, 1)) as llm:
        report = replay(records, server, llm, api_key=SERVICE_KEY, from_step=1, live={})
    assert (report.ok, report.steps, report.live_from) == (True, 2, 2), report.explain()
    live = llm_server.requests[-1]["messages"]
    assert not any(ELIDED in str(message["content"]) for message in live)
    assert "left out" not in live[0]["content"]
