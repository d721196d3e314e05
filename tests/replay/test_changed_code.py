"""A recorded trace meets changed code, in pytest runs of their own (pytester) through the pytest plugin:
one word changed in the system prompt's template fails the replay at step 1 on `system prompt` with a
diff of that word; read_file's line-number format changed fails it at step 2, the step that read a
file, on `observation`.

The changed code is an overlay: a `reactstep` tree in tmp_path whose folders are symlinks to this
checkout's, except the one changed (a copy). The subprocess gets it first on PYTHONPATH; the editable
install's finder is appended to sys.meta_path, after the PathFinder that reads PYTHONPATH, so the
overlay wins (the run's first test asserts where reactstep.prompts and read_file came from)."""

import json
from pathlib import Path
from typing import Any

import pytest

import reactstep.prompts
from reactstep.client.traces.scripted_llm import ScriptedLLMServer

pytest_plugins = ["pytester"]

CHECKOUT = reactstep.prompts.PROMPTS_DIR.parent
PACKAGES = ("client", "contract", "prompts", "service", "tools")
REPLIES = [
    'Thought: Let me see the layout.\nAction: list_files(path="", recursive=true)',
    'Thought: The app is in src.\nAction: read_file(file_path="src/app.py")',
    "Thought: main returns 42.\nFinal Answer: `main()` returns 42.",
]
OLD_WORD, NEW_WORD = "coding", "programming"
OLD_NUMBERS, NEW_NUMBERS = '"%5d | "', '"%5d: "'

TEST_FILE = """
import json
from pathlib import Path

import reactstep.prompts
import reactstep.tools.read_file
from reactstep.client import Client


def test_reactstep_comes_from_the_tree_asked():
    print("prompts:", reactstep.prompts.PROMPTS_DIR, "read_file:", reactstep.tools.read_file.__file__)
    assert reactstep.prompts.PROMPTS_DIR == Path({prompts!r})
    assert Path(reactstep.tools.read_file.__file__).parent == Path({tools!r})


def test_main_returns_42(reactstep_replay):
    with Client(reactstep_replay.url) as client:
        client.projects.create("demo")
        client.projects.upload("demo", "src/app.py", b"def main():\\n    return 42\\n")
    report = reactstep_replay({trace!r}, question="What does main return?", project="demo")
    Path({report!r}).write_text(json.dumps(report.to_json()))
    assert report.ok, report.explain()
"""


def overlay(root: Path, changed: str, edit: tuple[str, str, str]) -> Path:
    """root/reactstep: symlinks to the checkout's packages, but `changed` ("prompts" or "tools") a
    folder of its own where the file edit[0] is a copy with edit[1] replaced by edit[2] (once)."""
    package = root / "reactstep"
    package.mkdir(parents=True)
    for name in PACKAGES:
        if name != changed:
            (package / name).symlink_to(CHECKOUT / name, target_is_directory=True)
    folder = package / changed
    folder.mkdir()
    for entry in (CHECKOUT / changed).iterdir():
        if entry.name != edit[0] and entry.name != "__pycache__":
            (folder / entry.name).symlink_to(entry, target_is_directory=entry.is_dir())
    source, old, new = (CHECKOUT / changed / edit[0]).read_text(), edit[1], edit[2]
    assert source.count(old) == 1, f"{old!r} is not once in {changed}/{edit[0]}"
    (folder / edit[0]).write_text(source.replace(old, new))
    return root


def run(
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    name: str,
    tree: Path,
    *args: str,
) -> tuple[pytest.RunResult, dict[str, Any]]:
    """pytest in a subprocess importing reactstep from `tree`, with a data folder of its own."""
    reactstep_dir = tree / "reactstep"
    trace, report = tmp_path / "main.jsonl", tmp_path / f"{name}.json"
    pytester.makepyfile(
        test_main=TEST_FILE.format(
            prompts=str(reactstep_dir / "prompts"),
            tools=str(reactstep_dir / "tools"),
            trace=str(trace),
            report=str(report),
        )
    )
    monkeypatch.setenv("PYTHONPATH", str(tree))
    monkeypatch.setenv("REACTSTEP_DATA_DIR", str(tmp_path / name))
    result = pytester.runpytest_subprocess("-s", *args)
    return result, json.loads(report.read_text())


@pytest.fixture
def recorded(
    pytester: pytest.Pytester, llm_server: ScriptedLLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """The question recorded as tmp_path/main.jsonl against the checkout's own code (through a tree of
    symlinks only), and replayed green by it; the checkout as a tree."""
    monkeypatch.delenv("REACTSTEP_CLIENT_API_KEY", raising=False)
    monkeypatch.setenv("REACTSTEP_LLM_MODEL", "openai/scripted")
    monkeypatch.setenv("REACTSTEP_LLM_API_BASE", llm_server.base_url)
    checkout = tmp_path / "checkout"
    (checkout / "reactstep").mkdir(parents=True)
    for name in PACKAGES:
        (checkout / "reactstep" / name).symlink_to(CHECKOUT / name, target_is_directory=True)
    llm_server.push(*REPLIES)
    result, report = run(pytester, monkeypatch, tmp_path, "recording", checkout, "--reactstep-record")
    result.assert_outcomes(passed=2)
    assert len(llm_server.requests) == 3
    result, report = run(pytester, monkeypatch, tmp_path, "replaying", checkout)
    result.assert_outcomes(passed=2)
    assert (report["ok"], report["steps"]) == (True, 3)
    assert len(llm_server.requests) == 3  # the recorded replies answered
    return checkout


def test_one_word_of_the_system_prompt_changed_fails_at_step_1(
    recorded: Path, pytester: pytest.Pytester, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert (CHECKOUT / "prompts" / "system.j2").read_text().startswith(f"You are a {OLD_WORD} agent.")
    tree = overlay(
        tmp_path / "changed-prompt", "prompts", ("system.j2", f"a {OLD_WORD} agent", f"a {NEW_WORD} agent")
    )
    result, report = run(pytester, monkeypatch, tmp_path, "changed-prompt", tree)

    result.assert_outcomes(passed=1, failed=1)
    assert (report["ok"], report["diverged_at"], report["part"]) == (False, 1, "system prompt")
    diff = report["diffs"][0]["diff"]
    changed = [line for line in diff.splitlines() if line[:1] in "-+" and line[:3] not in ("---", "+++")]
    assert len(changed) == 2, diff
    removed, added = changed
    assert removed.startswith(f"-You are a {OLD_WORD} agent.")
    assert added == "+" + removed[1:].replace(OLD_WORD, NEW_WORD)
    result.stdout.fnmatch_lines(
        [
            "*replay diverged at step 1*system prompt*",
            f"*-You are a {OLD_WORD} agent.*",
            f"*+You are a {NEW_WORD} agent.*",
        ]
    )


def test_read_files_line_format_changed_fails_at_the_step_that_read(
    recorded: Path, pytester: pytest.Pytester, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tree = overlay(tmp_path / "changed-tool", "tools", ("read_file.py", OLD_NUMBERS, NEW_NUMBERS))
    result, report = run(pytester, monkeypatch, tmp_path, "changed-tool", tree)

    result.assert_outcomes(passed=1, failed=1)
    assert (report["ok"], report["diverged_at"], report["part"]) == (False, 2, "observation")
    diff = report["diffs"][0]["diff"]
    assert "-    1 | def main():" in diff.splitlines(), diff
    assert "+    1: def main():" in diff.splitlines(), diff
    result.stdout.fnmatch_lines(["*replay diverged at step 2: observation of read_file differs*"])
