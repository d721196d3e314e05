"""The client distribution's footprint in a venv that holds only it: installed size and import time.

    .venv/bin/python bench/client_footprint.py [--venv PATH] [--runs N]

PATH defaults to the venv tests/client/test_client_install.py caches under .cache/client-venv/ (run that
test once first). Prints the site-packages size with and without pip and setuptools (which every venv
has), and the import time of `import reactstep.client` as `python -X importtime` reports it (the
cumulative microseconds of that module, the median of N runs), and of the CLI's module, beside the
wall and CPU time of the whole interpreter with and without the import (on a busy machine the CPU time
is the steadier figure: -X importtime and wall time count the waits for a core).
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
MODULES = ("reactstep.client", "reactstep.client.cli")  # the library; the command


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
    for module in MODULES:
        cumulative = statistics.median(_importtime_us(python, module) for _ in range(args.runs))
        wall = statistics.median(_wall_s(python, f"import {module}") for _ in range(args.runs))
        cpu = statistics.median(_cpu_s(python, f"import {module}") for _ in range(args.runs))
        print(
            f"import {module}: {cumulative / 1000:.0f} ms (-X importtime, cumulative, median of "
            f"{args.runs}); python -c 'import {module}': {wall * 1000:.0f} ms wall, "
            f"{(cpu - bare_cpu) * 1000:.0f} ms CPU more than python -c pass"
        )
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


def _importtime_us(python: Path, module: str) -> int:
    finished = subprocess.run(
        [str(python), "-X", "importtime", "-c", f"import {module}"],
        capture_output=True,
        text=True,
        check=True,
    )
    for line in finished.stderr.splitlines():
        fields = [field.strip() for field in line.removeprefix("import time:").split("|")]
        if len(fields) == 3 and fields[2] == module:
            return int(fields[1])
    raise SystemExit(f"{module} is not in the -X importtime report")


def _wall_s(python: Path, code: str) -> float:
    started = time.perf_counter()
    subprocess.run([str(python), "-c", code], check=True)
    return time.perf_counter() - started


def _cpu_s(python: Path, code: str) -> float:
    """User + system CPU seconds of the whole interpreter: what a busy machine's waiting leaves out."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([str(python), "-c", code], check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


if __name__ == "__main__":
    sys.exit(main())
