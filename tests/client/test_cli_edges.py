"""The CLI's edges: an invalid setting is one line and exit 2 (the variable, the problem, the accepted
form); a reader that goes away (`| head`) ends a command without a traceback."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from reactstep.client.cli.main import main

CASES = [
    (
        "REACTSTEP_MAX_QUEUE",
        "abc",
        "error: REACTSTEP_MAX_QUEUE: Input should be a valid integer, unable to parse string as an integer; "
        "expected an integer >= 0 (POST requests waiting for a slot; more get 503 at once, not a wait "
        "without bound.)",
    ),
    (
        "REACTSTEP_STORAGE_BACKEND",
        "ftp",
        "error: REACTSTEP_STORAGE_BACKEND: Input should be 'local' or 's3'; expected one of local, s3 "
        "(Object store: a directory under data_dir, or S3/R2/MinIO that replicas share.)",
    ),
    (
        "REACTSTEP_BODY_TIMEOUT_S",
        "0",
        "error: REACTSTEP_BODY_TIMEOUT_S: Input should be greater than 0; expected a number > 0 "
        "(Longest a client may take to send a body (408 after); it holds no slot meanwhile.)",
    ),
    (
        "REACTSTEP_API_KEYS",
        "sk-secret-not-json",
        'error: REACTSTEP_API_KEYS: not valid JSON; expected a JSON list of strings, e.g. ["a", "b"] '
        "(Service API keys as `sha256:<hex of the key>:<project glob>[,<glob>...][:<limits>]` (`*` is "
        "every project; limits: docs/budgets.md; `reactstep hash-key` makes one); none configured is dev "
        "mode, served on loopback only.)",
    ),
]


@pytest.mark.parametrize(("variable", "value", "line"), CASES)
@pytest.mark.parametrize("command", ["serve", "sync"])
def test_a_bad_setting_is_one_line_and_exit_2(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    variable: str,
    value: str,
    line: str,
    command: str,
) -> None:
    monkeypatch.setenv(variable, value)
    arguments = ["serve"] if command == "serve" else ["sync", str(tmp_path), "--project", "p"]
    assert main(arguments) == 2
    captured = capsys.readouterr()
    assert captured.err.splitlines() == [line]
    assert "sk-secret" not in captured.err  # never the value: it may be a key
    assert captured.out == ""


def test_an_unknown_local_embedding_model_is_one_line_and_exit_2(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # The settings model accepts any name; building the app refuses it, before anything is announced.
    monkeypatch.setenv("REACTSTEP_EMBEDDING_MODEL", "local/nope")
    monkeypatch.setenv("REACTSTEP_DATA_DIR", str(tmp_path))
    assert main(["serve", "--port", "0"]) == 2
    captured = capsys.readouterr()
    assert captured.err.splitlines() == [
        "error: REACTSTEP_EMBEDDING_MODEL: unknown local embedding model 'local/nope'; known: "
        "local/all-MiniLM-L6-v2, local/all-MiniLM-L6-v2-int8, local/all-MiniLM-L6-v2-code, "
        "local/all-MiniLM-L6-v2-code-int8, local/paraphrase-MiniLM-L3-v2"
    ]
    assert captured.out == ""


def test_a_reader_that_goes_away_ends_the_command_quietly() -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)  # like `| head` that has already exited
    try:
        finished = subprocess.run(
            [
                sys.executable,
                "-c",
                "import sys; from reactstep.client.cli.main import main; sys.exit(main(['hash-key']))",
            ],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            check=False,
        )
    finally:
        os.close(write_end)
    assert (finished.returncode, finished.stderr) == (141, "")
