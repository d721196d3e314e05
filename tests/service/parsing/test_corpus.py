"""The conformance corpus through react_step over HTTP: replies real agents' models wrote (and issue
10's edge cases), each with the parse its framework expects; the pass rate must stay >= 0.95
overall and in every format family of 10 or more cases. corpus/README.md gives the provenance."""

import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from starlette.testclient import TestClient

from reactstep.client.traces.scripted_llm import ScriptedLLMServer

CORPUS = Path(__file__).parent / "corpus"
CLIENT_TOOLS = json.loads((CORPUS / "client_tools.json").read_text())
MIN_RATE = 0.95


def load_cases() -> list[dict[str, Any]]:
    return [
        json.loads(line)
        for path in sorted(CORPUS.glob("*.jsonl"))
        for line in path.read_text().splitlines()
        if line.strip()
    ]


def passes(case: dict[str, Any], body: dict[str, Any]) -> bool:
    """Whether the step is the one the case expects (and its thought, when the case gives it)."""
    expect = case["expect"]
    if body.get("status") != expect["status"]:
        return False
    if "expect_thought" in case and body.get("thought") != case["expect_thought"]:
        return False
    if "note_contains" in expect and not any(
        expect["note_contains"] in note for note in body.get("notes", [])
    ):
        return False
    if expect["status"] == "action_proposed":
        details = body["action_details"]
        return bool(details["tool_name"] == expect["tool"] and details["tool_args"] == expect["args"])
    if expect["status"] == "final_answer":
        return bool(body["final_answer"] == expect["final_answer"])
    return expect["error_contains"] in body["format_error"]


def test_the_corpus_has_provenance_and_enough_real_cases() -> None:
    cases = load_cases()
    assert len({case["id"] for case in cases}) == len(cases)
    for case in cases:
        assert case["source"]["repo"] and case["source"]["path"], case["id"]
        assert case.get("synthetic") or case["source"].get("commit"), case["id"]
    assert sum(not case.get("synthetic") for case in cases) >= 200


def test_react_step_reads_the_corpus(
    make_client: Callable[..., TestClient], llm_server: ScriptedLLMServer
) -> None:
    client = make_client()
    total, passed, failures = Counter[str](), Counter[str](), []
    for case in load_cases():
        llm_server.push(case["reply"])
        body = {
            "project_id": "demo",
            "session_id": "corpus",
            "user_query": "Answer the question.",
            "conversation_history": [],
            "max_iterations_left": 5,
            "client_tools": CLIENT_TOOLS,
            "llm_config": case.get("llm_config", {}),
        }
        answer = client.post("/api/agent/react_step", json=body).json()
        assert answer["raw_output"] == case["reply"], case["id"]  # always returned, unchanged
        total[case["family"]] += 1
        if passes(case, answer):
            passed[case["family"]] += 1
        else:
            failures.append((case["id"], answer.get("status"), answer.get("format_error")))
    rates = {family: passed[family] / total[family] for family in total}
    low = {family: rate for family, rate in rates.items() if total[family] >= 10 and rate < MIN_RATE}
    assert sum(passed.values()) / sum(total.values()) >= MIN_RATE, failures
    assert not low, (low, failures)
