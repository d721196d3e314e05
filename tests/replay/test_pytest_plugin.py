"""The pytest plugin, loaded through its pytest11 entry point in pytest runs of their own (pytester):
--reactstep-record writes a trace, a plain run replays it green, a changed tool description fails it
at step 1 with the manifest's diff."""

from pathlib import Path

import pytest

from reactstep.client.traces.scripted_llm import ScriptedLLMServer

pytest_plugins = ["pytester"]

TEST_FILE = """
from reactstep.client import Client

LINT = {{"name": "lint", "description": "Check a file for {word} problems."}}


def test_main_returns_42(reactstep_replay):
    with Client(reactstep_replay.url) as client:
        client.projects.create("demo")
    report = reactstep_replay(
        {trace!r}, client_tools=[LINT], question="What does main return?", project="demo"
    )
    assert report.ok, report.explain()
"""


def test_record_then_replay_then_fail_on_a_changed_manifest(
    pytester: pytest.Pytester, llm_server: ScriptedLLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("REACTSTEP_CLIENT_API_KEY", raising=False)
    monkeypatch.setenv("REACTSTEP_LLM_MODEL", "openai/scripted")
    monkeypatch.setenv("REACTSTEP_LLM_API_BASE", llm_server.base_url)
    trace = tmp_path / "main.jsonl"
    pytester.makepyfile(test_main=TEST_FILE.format(word="style", trace=str(trace)))

    llm_server.push("Thought: I know it.\nFinal Answer: `main()` returns 42.")
    monkeypatch.setenv("REACTSTEP_DATA_DIR", str(tmp_path / "recording"))
    pytester.runpytest_subprocess("--reactstep-record").assert_outcomes(passed=1)
    assert [line.count('"kind"') for line in trace.read_text().splitlines()] == [1, 1]
    assert len(llm_server.requests) == 1

    monkeypatch.setenv("REACTSTEP_DATA_DIR", str(tmp_path / "replaying"))
    pytester.runpytest_subprocess().assert_outcomes(passed=1)
    assert len(llm_server.requests) == 1  # the recorded reply answered, not the configured LLM

    pytester.makepyfile(test_main=TEST_FILE.format(word="lint", trace=str(trace)))
    monkeypatch.setenv("REACTSTEP_DATA_DIR", str(tmp_path / "changed"))
    failed = pytester.runpytest_subprocess()
    failed.assert_outcomes(failed=1)
    failed.stdout.fnmatch_lines(
        [
            "*replay diverged at step 1: the LLM was asked another manifest*",
            "*+++ replayed manifest*",
            "*+*Check a file for lint problems.*",
        ]
    )
