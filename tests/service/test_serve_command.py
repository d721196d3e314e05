"""`reactstep serve` ends on Ctrl-C as a command should: its shutdown logged, ended by SIGINT (a shell
says 130), no traceback, also while litellm is still being imported in the background (right after start)."""

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.served import REACTSTEP, free_port, wait_until_up


@pytest.mark.parametrize("after_s", [0.0, 3.0])
def test_ctrl_c_ends_serve_by_sigint_and_no_traceback(tmp_path: Path, after_s: float) -> None:
    env = {key: value for key, value in os.environ.items() if not key.startswith("REACTSTEP_")}
    env["REACTSTEP_DATA_DIR"] = str(tmp_path)
    port = free_port()
    process = subprocess.Popen(
        [REACTSTEP, "serve", "--port", str(port)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    wait_until_up(f"http://127.0.0.1:{port}", process)
    time.sleep(after_s)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == -signal.SIGINT
    assert "Traceback" not in stderr.decode()
    assert "Application shutdown complete." in stderr.decode()
