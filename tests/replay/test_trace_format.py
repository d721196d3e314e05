"""A recorded trace is format 2 as trace.schema.json says, holds what the LLM was asked, and no key."""

import json
from importlib.resources import files
from pathlib import Path

import jsonschema
import pytest
from replay_helpers import QUESTION, SERVICE_KEY, TEXT_REPLIES, Record, settings_for

from reactstep.client import Client
from reactstep.client.traces.format import ReplayMismatch, load_trace, recorded_texts
from reactstep.client.traces.scripted_llm import ScriptedLLMServer
from reactstep.service.http.app import create_app
from reactstep.service.http.serving import BackgroundServer
from reactstep.tools.store.local import LocalStore

LLM_CANARY = "canary-llm-key-5be21a94"
EMBEDDING_CANARY = "canary-embedding-key-03c7d8"


def test_a_recorded_trace_follows_the_schema_and_holds_what_the_llm_was_asked(record: Record) -> None:
    trace = record(llm={"tool_calling": "text", "temperature": 0.2})
    schema = json.loads(files("reactstep.client").joinpath("trace.schema.json").read_text())
    records = [json.loads(line) for line in trace.read_text().splitlines()]
    for line in records:
        jsonschema.validate(line, schema)
    assert [(r["kind"], r.get("step")) for r in records] == [
        ("session", None),
        ("react_step", 1),
        ("execute_action", 1),
        ("react_step", 2),
        ("execute_action", 2),
        ("react_step", 3),
    ]
    session, first = records[0], records[1]
    assert (session["version"], session["project_version"]) == (2, records[0]["project_version"])
    assert isinstance(session["project_version"], int)
    assert first["request"]["include_llm_request"] is True
    seen = first["response"]["llm_request"]
    assert set(seen["parts"]) == {"model", "system prompt", "message 1", "manifest", "sampling"}
    assert set(seen["rendered"]) == set(seen["parts"])
    assert "list_files" in seen["rendered"]["manifest"]
    assert seen["rendered"]["manifest"] in seen["rendered"]["system prompt"]
    assert json.loads(seen["rendered"]["sampling"])["temperature"] == 0.2
    assert "What does main return?" in seen["rendered"]["message 1"]
    third = records[5]["response"]["llm_request"]
    assert {"message 2", "message 3"} <= set(third["parts"])  # the steps so far, as messages
    assert third["parts"]["system prompt"] == seen["parts"]["system prompt"]
    assert "system prompt" not in third["rendered"] and "message 1" not in third["rendered"]  # written once
    texts = recorded_texts(records)
    steps = [line["response"]["llm_request"] for line in records if line["kind"] == "react_step"]
    assert all(texts[digest] for step in steps for digest in step["parts"].values())
    assert first["response"]["raw_output"].startswith("Thought: Let me see the layout.")
    assert "return 42" in records[4]["response"]["observation"]
    assert first["response"]["usage"]["total_tokens"] >= 0 and "llm_ms" in first["response"]["timing"]


def test_no_key_reaches_any_byte_of_the_trace(
    tmp_path: Path, llm_server: ScriptedLLMServer, local_store: LocalStore
) -> None:
    settings = settings_for(tmp_path / "server", llm_server, embedding_api_key=EMBEDDING_CANARY)
    with BackgroundServer(create_app(settings, store=local_store)) as up:
        llm_server.push(*TEXT_REPLIES)
        trace = tmp_path / "keys.jsonl"
        with Client(up.url, SERVICE_KEY) as client:
            assert (
                client.run(QUESTION, project="demo", trace=trace, llm_key=LLM_CANARY).status == "final_answer"
            )
    assert any(LLM_CANARY in seen for seen in llm_server.authorizations)  # the lent key was used
    data = trace.read_bytes()
    for canary in (LLM_CANARY, SERVICE_KEY, EMBEDDING_CANARY):
        assert canary.encode() not in data
        assert canary[:12].encode() not in data


def test_a_trace_of_another_format_is_refused_by_name(tmp_path: Path) -> None:
    trace = tmp_path / "future.jsonl"
    trace.write_text(json.dumps({"kind": "session", "version": 9}) + "\n")
    with pytest.raises(ReplayMismatch, match="recorded with trace format 9, this reactstep reads 1, 2"):
        load_trace(trace)
