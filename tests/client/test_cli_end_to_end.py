"""The whole loop over real boundaries: upload to S3 (moto on loopback), ask with a scripted LLM
over HTTP, record the trace, replay it, and see a doctored trace fail."""

import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from reactstep.client.cli.main import main
from reactstep.client.traces.scripted_llm import ScriptedLLMServer
from reactstep.service.backends import s3_client
from reactstep.service.http.app import create_app
from reactstep.service.http.serving import BackgroundServer
from reactstep.service.settings import Settings

REPLIES = [
    'Thought: Let me see the layout.\nAction: list_files(path="", recursive=true)',
    'Thought: The app is in src.\nAction: read_file(file_path="src/app.py")',
    "Thought: main returns 42.\nFinal Answer: `main()` returns 42.",
]


@pytest.fixture
def s3_settings(s3_server: str, monkeypatch: pytest.MonkeyPatch) -> Settings:
    """A fresh bucket on the loopback S3 server, named in the CLI's environment too."""
    bucket = f"e2e-{uuid.uuid4().hex[:12]}"
    env = {
        "REACTSTEP_STORAGE_BACKEND": "s3",
        "REACTSTEP_S3_ENDPOINT_URL": s3_server,
        "REACTSTEP_S3_BUCKET": bucket,
        "REACTSTEP_S3_REGION": "us-east-1",
        "REACTSTEP_S3_ACCESS_KEY_ID": "test",
        "REACTSTEP_S3_SECRET_ACCESS_KEY": "test",
    }
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    settings = Settings()
    s3_client(settings).create_bucket(Bucket=bucket)
    return settings


@pytest.fixture
def project_dir(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    (root / "build").mkdir()
    (root / ".gitignore").write_text("build/\n*.log\n")
    (root / "README.md").write_text("# Demo\n")
    (root / "src" / "app.py").write_text("def main():\n    return 42\n")
    (root / "build" / "out.py").write_text("generated = True\n")
    (root / "debug.log").write_text("noise\n")
    (root / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    return root


@pytest.fixture
def server_url(s3_settings: Settings) -> Iterator[tuple[str, ScriptedLLMServer]]:
    with ScriptedLLMServer(REPLIES) as llm:
        settings = s3_settings.model_copy(
            update={
                "llm_model": "openai/scripted",
                "llm_api_base": llm.base_url,
                "llm_api_base_allowlist": ["http://127.0.0.1:*"],
            }
        )
        with BackgroundServer(create_app(settings)) as server:
            yield server.url, llm


def test_upload_ask_record_replay(
    project_dir: Path,
    server_url: tuple[str, ScriptedLLMServer],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    url, _ = server_url
    assert main(["upload", str(project_dir), "--project", "demo"]) == 0
    assert capsys.readouterr().out.strip() == (
        "synced demo at version 3: uploaded 3 files (46 bytes), 0 unchanged, deleted 0; "
        "skipped 2 ignored, 1 binary, 0 oversize"
    )
    assert main(["upload", str(project_dir), "--project", "demo"]) == 0
    assert "synced demo at version 3: uploaded 0 files (0 bytes), 3 unchanged" in capsys.readouterr().out

    trace = tmp_path / "trace.jsonl"
    question = ["ask", "What does main return?", "--project", "demo", "--server", url]
    assert main([*question, "--record", str(trace)]) == 0
    printed = capsys.readouterr().out
    assert "Final Answer: `main()` returns 42." in printed
    assert "    2 |     return 42" in printed
    records = [json.loads(line) for line in trace.read_text().splitlines()]
    assert [record["kind"] for record in records] == [
        "session", "react_step", "execute_action", "react_step", "execute_action", "react_step",
    ]  # fmt: skip
    assert records[2]["response"]["observation"] == (
        "Contents of ./ (3 entries):\n.gitignore  (13 bytes)\nREADME.md  (7 bytes)\nsrc/app.py  (26 bytes)"
    )

    assert main(["replay", str(trace), "--server", url]) == 0
    assert "replay matched: final_answer after 3 steps" in capsys.readouterr().out

    records[4]["response"]["observation"] = "File: src/app.py (2 lines)\n    1 | changed"
    trace.write_text("".join(json.dumps(record) + "\n" for record in records))
    assert main(["replay", str(trace), "--server", url]) == 1
    printed = capsys.readouterr().out
    assert "replay diverged at step 2: observation of read_file differs" in printed


def test_replay_without_server_runs_in_process(
    s3_settings: Settings, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The default replay builds its own server from the environment (here: the S3 settings)."""
    from reactstep.service.backends import open_store

    open_store(s3_settings).put("demo", "src/app.py", b"def main():\n    return 42\n")
    trace = tmp_path / "trace.jsonl"
    header = {
        "kind": "session", "version": 1, "project_id": "demo", "session_id": "s",
        "user_query": "q", "max_iterations": 3, "llm_config": {},
    }  # fmt: skip
    step = {
        "kind": "react_step",
        "request": {},
        "response": {"status": "final_answer", "thought": "", "final_answer": "42",
                     "raw_output": "Final Answer: 42"},
    }  # fmt: skip
    trace.write_text(json.dumps(header) + "\n" + json.dumps(step) + "\n")
    assert main(["replay", str(trace)]) == 0
    assert "replay matched: final_answer after 1 steps" in capsys.readouterr().out
