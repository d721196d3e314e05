"""The note in the data dir (server.json) belongs to the `reactstep serve` that wrote it: a second serve on
the same data dir refuses and touches nothing, a serve that cannot bind its port leaves any note alone,
and the commands keep using the first server and say so."""

import fcntl
import json
import os
import socket
import subprocess
from pathlib import Path

import pytest

from tests.served import REACTSTEP, free_port, serving


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """A shell with no reactstep settings, on a fresh data dir."""
    clean = {key: value for key, value in os.environ.items() if not key.startswith("REACTSTEP_")}
    return clean | {"REACTSTEP_DATA_DIR": str(tmp_path / "data"), "HF_HUB_OFFLINE": "1"}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "app.py").write_text("def main():\n    return 42\n")
    return root


def reactstep(env: dict[str, str], *arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([REACTSTEP, *arguments], env=env, capture_output=True, text=True, timeout=120)


def serve(env: dict[str, str], port: int) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [REACTSTEP, "serve", "--port", str(port)], env=env, capture_output=True, text=True, timeout=60
    )


def test_a_second_serve_on_the_data_dir_refuses_and_the_first_keeps_its_note(
    env: dict[str, str], project: Path
) -> None:
    data_dir = Path(env["REACTSTEP_DATA_DIR"])
    with serving(env) as (url, process):
        note = (data_dir / "server.json").read_text()
        second = serve(env, free_port())
        assert (second.returncode, second.stdout) == (2, "")
        assert second.stderr == (
            f"error: a reactstep server (pid {process.pid}) already serves {data_dir} at {url}; "
            "commands on this data dir use it (stop it to start another)\n"
        )
        assert (data_dir / "server.json").read_text() == note
        assert json.loads(note) == {"url": url, "pid": process.pid}

        synced = reactstep(env, "sync", str(project), "--project", "demo")
        assert (synced.returncode, synced.stderr) == (0, f"using the server running on {data_dir} at {url}\n")


def test_a_serve_on_a_taken_port_fails_in_one_line_and_leaves_the_note_alone(env: dict[str, str]) -> None:
    data_dir = Path(env["REACTSTEP_DATA_DIR"])
    data_dir.mkdir(parents=True)
    stale = json.dumps({"url": "http://127.0.0.1:9", "pid": 2**22 + 1})  # a pid no process has
    (data_dir / "server.json").write_text(stale)
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        failed = serve(env, port)
    assert (failed.returncode, failed.stdout) == (1, "")
    assert failed.stderr == f"error: cannot listen on 127.0.0.1:{port}: Address already in use\n"
    assert (data_dir / "server.json").read_text() == stale


def test_in_process_says_why_and_that_the_vector_store_is_held(env: dict[str, str], project: Path) -> None:
    """Another process (here: this test) holds the embedded store: sync works, index says so plainly."""
    data_dir = Path(env["REACTSTEP_DATA_DIR"])
    (data_dir / "vectors").mkdir(parents=True)
    with open(data_dir / "vectors" / "store.lock", "a+", encoding="utf-8") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        lock.write(f"{os.getpid()}\n")
        lock.flush()
        synced = reactstep(env, "sync", str(project), "--project", "demo")  # no search index needed
        indexed = reactstep(env, "index", str(project), "--project", "demo")
    assert (synced.returncode, synced.stdout.split(":")[0]) == (0, "synced demo at version 1")
    assert indexed.returncode == 1
    said, error = indexed.stderr.splitlines()
    assert said == f"running in this process on {data_dir} (no --server, and no `reactstep serve` runs on it)"
    assert error.startswith("error: ")
    assert f"in use by another process (pid {os.getpid()}); run one server per data dir" in error
