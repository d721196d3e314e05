"""A new user's first start: a fresh clone, an empty pip cache, `scripts/serve`, until /healthz answers.

Run: .venv/bin/python bench/first_start.py [--keep DIR]

Clones this repository's HEAD into a temporary folder (or DIR, kept), runs `scripts/serve --port P` there
with pip's cache turned off (PIP_NO_CACHE_DIR), and prints the seconds from the start to the first
/healthz answer, the venv's size and the machine's load. The packages come from the registry as a new
user's would. Goal (issue 39): within 3 minutes.
"""

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from tests.served import free_port  # noqa: E402

GOAL_S = 180.0


def folder_mib(path: Path) -> float:
    """The size of the files under path, in MiB."""
    return sum(file.stat().st_size for file in path.rglob("*") if file.is_file()) / 2**20


def first_start(work: Path) -> None:
    """Clone, serve, wait for /healthz; print the figures."""
    clone = work / "reactstep"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
    port = free_port()
    env = {
        key: value for key, value in os.environ.items() if not key.startswith(("REACTSTEP_", "VIRTUAL_ENV"))
    }
    env.update(PIP_NO_CACHE_DIR="1", REACTSTEP_DATA_DIR=str(work / "data"))
    began = time.monotonic()
    with open(work / "serve.log", "w") as log:
        process = subprocess.Popen(
            [str(clone / "scripts" / "serve"), "--port", str(port)],
            cwd=clone,
            env=env,
            stdout=log,
            stderr=log,
        )
        try:
            while process.poll() is None:
                try:
                    if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                        break
                except httpx.HTTPError:
                    time.sleep(0.5)
            took = time.monotonic() - began
            if process.poll() is not None:
                raise SystemExit(f"scripts/serve ended first; see {work / 'serve.log'}")
        finally:
            process.send_signal(signal.SIGINT)
            process.wait(timeout=60)
    verdict = "within" if took <= GOAL_S else "over"
    print(f"first /healthz after {took:.0f} s ({verdict} the {GOAL_S:.0f} s goal)")
    print(
        f"venv {folder_mib(clone / '.venv'):.0f} MiB; load {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--keep", type=Path, help="clone into this folder and leave it there")
    args = parser.parse_args()
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
        first_start(args.keep)
        return
    with tempfile.TemporaryDirectory() as work:
        first_start(Path(work))


if __name__ == "__main__":
    main()
