"""A short run of the client's reference loop against the real model, recorded, then replayed."""

from pathlib import Path

import pytest

from reactstep.client import Client
from reactstep.client.cli.main import main
from tests.llm_server.real_steps import ENDINGS, MAX_TOKENS, QUESTION

pytestmark = pytest.mark.llm_server


def test_a_run_ends_in_a_documented_status_and_replays(
    reactstep_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trace = tmp_path / "trace.jsonl"
    with Client(reactstep_url) as client:
        result = client.run(
            QUESTION,
            project="demo",
            max_steps=2,
            llm={"tool_calling": "text", "max_tokens": MAX_TOKENS},
            trace=trace,
        )
    print(f"run: {result.status} after {result.steps} steps")
    assert result.status in ENDINGS
    assert 1 <= result.steps <= 3
    capsys.readouterr()
    # The replay's steps name its own scripted model (llm_config.api_base): the same server, other model.
    assert main(["replay", str(trace), "--server", reactstep_url]) == 0
    assert (
        capsys.readouterr()
        .out.strip()
        .endswith(f"replay matched: {result.status} after {result.steps} steps")
    )
