"""The whole write path over real boundaries: a project in S3 (moto, versioned bucket), indexed through
the server; an agent greps, finds a definition, reads the file, proposes replace_in_file, is approved,
and the object in S3 changes exactly once; the recorded trace replays."""

import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from reactstep.client.cli.main import main
from reactstep.client.traces.scripted_llm import ScriptedLLMServer
from reactstep.service.backends import open_store, s3_client
from reactstep.service.http.app import create_app
from reactstep.service.http.serving import BackgroundServer
from reactstep.service.settings import Settings
from reactstep.tools.embedding.embeddings import LocalEmbedder

APP_PY = "def answer():\n    return 41\n"
FIXED_PY = "def answer():\n    return 42\n"
REPLIES = [
    'Thought: Find where the answer is made.\nAction: grep(pattern="return 41")',
    'Thought: Which function is it?\nAction: find_definition(symbol="answer")',
    'Thought: Read it whole.\nAction: read_file(file_path="src/app.py")',
    'Thought: Fix it.\nAction: replace_in_file(path="src/app.py", find="return 41", replace="return 42")',
    "Thought: The change is written.\nFinal Answer: answer() now returns 42.",
]


@pytest.fixture
def settings(s3_server: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Settings:
    """A versioned bucket on the loopback S3 server, named in the CLI's environment too."""
    env = {
        "REACTSTEP_DATA_DIR": str(tmp_path / "data"),
        "REACTSTEP_STORAGE_BACKEND": "s3",
        "REACTSTEP_S3_ENDPOINT_URL": s3_server,
        "REACTSTEP_S3_BUCKET": f"edits-{uuid.uuid4().hex[:12]}",
        "REACTSTEP_S3_REGION": "us-east-1",
        "REACTSTEP_S3_ACCESS_KEY_ID": "test",
        "REACTSTEP_S3_SECRET_ACCESS_KEY": "test",
        "REACTSTEP_APPROVAL_SECRET": "edits-test-secret-0123456789abcdef",
        "REACTSTEP_LLM_API_BASE_ALLOWLIST": '["http://127.0.0.1:*"]',
    }
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    settings = Settings()
    client = s3_client(settings)
    client.create_bucket(Bucket=settings.s3_bucket)
    client.put_bucket_versioning(Bucket=settings.s3_bucket, VersioningConfiguration={"Status": "Enabled"})
    return settings


def versions(settings: Settings) -> int:
    """How many times src/app.py was written in the bucket."""
    key = f"{settings.s3_prefix}/demo/src/app.py"
    listed = s3_client(settings).list_object_versions(Bucket=settings.s3_bucket, Prefix=key)
    return len(listed.get("Versions", []))


@pytest.fixture
def server(settings: Settings, local_embedder: LocalEmbedder) -> Iterator[tuple[str, ScriptedLLMServer]]:
    with ScriptedLLMServer(REPLIES) as llm:
        served = settings.model_copy(update={"llm_model": "openai/scripted", "llm_api_base": llm.base_url})
        with BackgroundServer(create_app(served, embedder=local_embedder)) as running:
            yield running.url, llm


def test_grep_define_read_edit_approve_writes_once_and_replays(
    settings: Settings,
    server: tuple[str, ScriptedLLMServer],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    url, _ = server
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    (project / "src" / "app.py").write_text(APP_PY)
    (project / "src" / "main.py").write_text("from app import answer\n\nprint(answer())\n")
    assert main(["index", str(project), "--project", "demo", "--server", url]) == 0
    assert versions(settings) == 1

    trace = tmp_path / "trace.jsonl"
    question = ["ask", "Make answer() return 42", "--project", "demo", "--server", url, "--approve-all"]
    assert main([*question, "--record", str(trace)]) == 0
    assert open_store(settings).get("demo", "src/app.py").decode() == FIXED_PY
    assert versions(settings) == 2  # the upload, then exactly one approved write

    records = [json.loads(line) for line in trace.read_text().splitlines()]
    tools = [r["request"]["tool_name"] for r in records if r["kind"] == "execute_action"]
    assert tools == ["grep", "find_definition", "read_file", "replace_in_file", "replace_in_file"]
    observations = [r["response"]["observation"] for r in records if r["kind"] == "execute_action"]
    assert "src/app.py:2:    return 41" in observations[0]
    assert "src/app.py:1" in observations[1]
    assert observations[3].startswith("Nothing was written yet.")
    assert observations[4] == "Wrote src/app.py (+1 -1 lines)."

    # The trace names the version it started from; the project has moved on, and says how.
    assert records[0]["project_version"] == 2
    capsys.readouterr()
    assert main(["replay", str(trace), "--server", url]) == 1
    assert capsys.readouterr().err == (
        f"using the server at {url} (--server)\n"
        "error: the trace started from version 2 of project 'demo'; it is now at version 3, and 1 "
        "file(s) differ from what they were then: src/app.py. Bring them back (e.g. sync a folder "
        "holding the files of then: `reactstep sync DIR --project demo --force`) and replay again, or "
        "pass --ignore-version to replay against the files as they are\n"
    )

    # Back to the recorded start: the local tree still holds the old app.py. Indexing it would revert
    # the agent's write, so it is refused (exit 1, naming the file, nothing sent) until --force.
    assert main(["index", str(project), "--project", "demo", "--server", url]) == 1
    refusal = capsys.readouterr().err
    assert "a tool on the server changed 1 file(s) of project 'demo'" in refusal
    assert "src/app.py (version 3)" in refusal
    assert versions(settings) == 2
    assert main(["index", str(project), "--project", "demo", "--server", url, "--force"]) == 0
    assert "overwrote 1 tool write(s)" in capsys.readouterr().out
    assert main(["replay", str(trace), "--server", url]) == 0
    replayed = capsys.readouterr()
    assert "replay matched: final_answer after 5 steps" in replayed.out
    assert replayed.err == (
        f"using the server at {url} (--server)\n"
        "note: project 'demo' is at version 4, not 2, but every file changed since holds the bytes it "
        "held then\n"
    )
    assert open_store(settings).get("demo", "src/app.py").decode() == FIXED_PY
    assert versions(settings) == 4  # the restore, then one write by the replay
