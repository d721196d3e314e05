"""The client distribution's footprint in a venv that holds only it: installed size and import time.

    .venv/bin/python bench/client_footprint.py [--venv PATH] [--runs N]

PATH defaults to the venv tests/client/test_client_install.py caches under .cache/client-venv/ (run that
test once first). Prints the site-packages size with and without pip and setuptools (which every venv
has), and the import time of what a user runs: `from reactstep.client import Client` (the names a
program imports, not the package's shell: AsyncClient is loaded on first use, so it is measured on its
own), and `reactstep --help` (the command). Each as `python -X importtime` reports it (the imports'
cumulative microseconds beyond those of `python -c pass`, the median of N runs), beside the wall and
CPU time of the whole interpreter with and without it (on a busy machine the CPU time is the steadier
figure: -X importtime and wall time count the waits for a core).
"""

import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / ".cache" / "client-venv"
PACKAGING = re.compile(r"^(pip|setuptools|_distutils_hack|pkg_resources|distutils-precedence\.pth)([-_.]|$)")
DEPENDENCIES = "httpx, httpx_sse, pydantic"  # what the client's own code stands on
# what a program runs: the sync client; the async one (loaded on first use); the command's module
STATEMENTS = (
    "from reactstep.client import Client",
    "from reactstep.client import AsyncClient",
    "import reactstep.client.cli.main",
)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--venv", type=Path, help="a venv holding only reactstep-client")
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    venv = args.venv or _cached_venv()
    if venv is None:
        print("no venv: run tests/client/test_client_install.py once, or pass --venv", file=sys.stderr)
        return 2
    python = venv / "bin" / "python"
    site = next((venv / "lib").glob("python3*/site-packages"))
    everything = _size(site.iterdir())
    without = _size(entry for entry in site.iterdir() if not PACKAGING.match(entry.name))
    print(f"venv: {venv}; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"site-packages: {everything / 1e6:.1f} MB; without pip and setuptools: {without / 1e6:.1f} MB")
    bare = statistics.median(_wall_s(python, "pass") for _ in range(args.runs))
    bare_cpu = statistics.median(_cpu_s(python, "pass") for _ in range(args.runs))
    print(f"python -c pass: {bare * 1000:.0f} ms wall, {bare_cpu * 1000:.0f} ms CPU (median of {args.runs})")
    deps_cpu = statistics.median(_cpu_s(python, f"import {DEPENDENCIES}") for _ in range(args.runs))
    print(f"import {DEPENDENCIES} alone: {(deps_cpu - bare_cpu) * 1000:.0f} ms CPU more than python -c pass")
    bare_us = statistics.median(_importtime_us(python, "pass") for _ in range(args.runs))
    for code in STATEMENTS:
        cumulative = statistics.median(_importtime_us(python, code) for _ in range(args.runs))
        wall = statistics.median(_wall_s(python, code) for _ in range(args.runs))
        cpu = statistics.median(_cpu_s(python, code) for _ in range(args.runs))
        print(
            f"{code}: {(cumulative - bare_us) / 1000:.0f} ms (-X importtime beyond python -c pass, "
            f"median of {args.runs}); {wall * 1000:.0f} ms wall, "
            f"{(cpu - bare_cpu) * 1000:.0f} ms CPU more than python -c pass"
        )
    command = [str(venv / "bin" / "reactstep"), "--help"]
    wall = statistics.median(_wall_s(python, command=command) for _ in range(args.runs))
    cpu = statistics.median(_cpu_s(python, command=command) for _ in range(args.runs))
    more = (cpu - bare_cpu) * 1000
    print(f"reactstep --help: {wall * 1000:.0f} ms wall, {more:.0f} ms CPU more than python -c pass")
    return 0


def _cached_venv() -> Path | None:
    ready = sorted(CACHE.glob("*/ready"), key=lambda path: path.stat().st_mtime)
    return ready[-1].parent if ready else None


def _size(entries: Iterable[Path]) -> int:
    total = 0
    for entry in entries:
        paths = [entry] if entry.is_file() else [path for path in entry.rglob("*") if path.is_file()]
        total += sum(path.stat().st_size for path in paths if not path.is_symlink())
    return total


def _importtime_us(python: Path, code: str) -> int:
    """The cumulative microseconds of every import the interpreter made running code (site's too)."""
    finished = subprocess.run(
        [str(python), "-X", "importtime", "-c", code], capture_output=True, text=True, check=True
    )
    total = 0
    for line in finished.stderr.splitlines():
        fields = line.removeprefix("import time:").split("|")
        if len(fields) == 3 and fields[1].strip().isdigit() and not fields[2].startswith("   "):
            total += int(fields[1])  # a top-level import: its children are inside its cumulative time
    return total


def _wall_s(python: Path, code: str = "pass", command: list[str] | None = None) -> float:
    started = time.perf_counter()
    subprocess.run(command or [str(python), "-c", code], check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - started


def _cpu_s(python: Path, code: str = "pass", command: list[str] | None = None) -> float:
    """User + system CPU seconds of the whole interpreter: what a busy machine's waiting leaves out."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(command or [str(python), "-c", code], check=True, stdout=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


if __name__ == "__main__":
    sys.exit(main())
