"""read_file under load: the service next to a bare Starlette app, driven by wrk.

Run: .venv/bin/python bench/read_load.py [--seconds 20] [--rounds 2] [--connections 16] [--peer bare]
Needs wrk (Debian: apt-get install wrk).

Both apps run as `reactstep serve` runs one (one uvicorn process, same flags) on 127.0.0.1:
    A  POST /api/agent/execute_action read_file, local store, dev mode
    B  a bare Starlette app answering that POST with the same JSON (`--peer bare`), or the service with
       the route answered through Starlette's router, not http/direct.py (`--peer routed`), or a
       second service like A, on A's data (`--peer service`: a control, its A/B should be 1)
wrk (one thread, `--connections` keep-alive connections) drives A and B `--rounds` times, each for
`--seconds`, in turn (A B, B A, ...: drift in the machine's load hits both alike). Printed:
requests/s, latency percentiles and the server's CPU per request (what a shared machine moves least)
of each run, the A/B throughput ratio of the medians (goal >= 0.5 against the bare app), the ratio of
the median CPU per request (B/A), A's worst p99 (goal <= 15 ms) and A's peak RSS (goal <= 250 MiB).
"""

import argparse
import json
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from contextlib import ExitStack
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).parent))
from peers import Child, child, load_average
from read_file_latency import READ, SOURCE
from stats import machine

GOALS = {"throughput": 0.5, "p99_ms": 15.0, "rss_mib": 250.0}
# B as a second service on A's data: through the router only, or A's twin (a control: A/B should be 1)
PEER_ROLES = {"routed": "service_routed", "service": "service"}
LUA = """wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = [[{body}]]
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--peer", choices=("bare", "routed", "service"), default="bare")
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        raise SystemExit("wrk is not installed (Debian: apt-get install wrk)")
    print(machine(), "|", load_average(), "before")
    with tempfile.TemporaryDirectory() as data, child("service", settings={"data_dir": data}) as writer:
        answer = _project_with_file(writer.url)
        (Path(data) / "answer.json").write_text(json.dumps(answer))
        script = Path(data) / "read.lua"
        script.write_text(LUA.format(body=json.dumps(READ)))
        with ExitStack() as running:
            if args.peer == "bare":
                service, peer = writer, running.enter_context(child("bare", str(Path(data) / "answer.json")))
            else:
                # Both start after the writes: the writer indexed the file on its PUT and keeps the
                # embedding model's threads; against a twin that only read it served 20-35% fewer
                # requests (--peer service, 2026-11-27), two fresh twins 5% apart.
                service = running.enter_context(child("service", settings={"data_dir": data}))
                peer = running.enter_context(child(PEER_ROLES[args.peer], settings={"data_dir": data}))
            _wrk(service, script, 2, args.connections)  # warm-up
            _wrk(peer, script, 2, args.connections)
            a_runs, b_runs = [], []
            for n in range(args.rounds):
                for target, runs in ((service, a_runs), (peer, b_runs))[:: -1 if n % 2 else 1]:
                    runs.append(_wrk(target, script, args.seconds, args.connections))
            rss = service.peak_rss_mib()
    _report(a_runs, b_runs, rss, args.connections, args.peer)
    print(load_average(), "after")


def _project_with_file(url: str) -> dict[str, object]:
    with httpx.Client(base_url=url) as client:
        client.put("/api/projects/bench").raise_for_status()
        client.put("/api/projects/bench/files/src/module.py", content=SOURCE).raise_for_status()
        answer: dict[str, object] = (
            client.post("/api/agent/execute_action", json=READ).raise_for_status().json()
        )
    assert answer["is_error"] is False, answer
    return answer


def _wrk(target: Child, script: Path, seconds: int, connections: int) -> dict[str, float]:
    """One wrk run: requests/s, p50 and p99 in ms, the server's CPU per request in us; any answer
    that is not 2xx stops the benchmark."""
    command = ["wrk", "-t1", f"-c{connections}", f"-d{seconds}s", "--latency", "-s", str(script)]
    cpu_before = target.cpu_seconds()
    output = subprocess.run(
        [*command, f"{target.url}/api/agent/execute_action"], capture_output=True, text=True, check=True
    ).stdout
    cpu = target.cpu_seconds() - cpu_before
    if "Non-2xx" in output or "Socket errors" in output:
        raise SystemExit(f"wrk saw errors:\n{output}")
    requests = int(re.search(r"(\d+) requests in", output)[1])  # type: ignore[index]
    return {
        "cpu_us": cpu / requests * 1e6,
        "rps": float(re.search(r"Requests/sec:\s+([\d.]+)", output)[1]),  # type: ignore[index]
        "p50_ms": _ms(re.search(r"50%\s+([\d.]+\w+)", output)[1]),  # type: ignore[index]
        "p99_ms": _ms(re.search(r"99%\s+([\d.]+\w+)", output)[1]),  # type: ignore[index]
    }


def _ms(text: str) -> float:
    value, unit = re.fullmatch(r"([\d.]+)(\w+)", text).groups()  # type: ignore[union-attr]
    return float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]


def _report(
    a_runs: list[dict[str, float]], b_runs: list[dict[str, float]], rss: float, clients: int, peer: str
) -> None:
    print(f"\nwrk -t1 -c{clients}, {len(a_runs)} rounds of A and B in turn (A B, B A, ...)")
    for name, runs in (("A read_file", a_runs), (f"B {peer:<9}", b_runs)):
        for run in runs:
            print(
                f"{name}: {run['rps']:,.0f} req/s, p50 {run['p50_ms']:.2f} ms, p99 {run['p99_ms']:.2f} ms, "
                f"{run['cpu_us']:.0f} us CPU per request"
            )
    ratio = statistics.median(r["rps"] for r in a_runs) / statistics.median(r["rps"] for r in b_runs)
    cpu_a, cpu_b = (statistics.median(r["cpu_us"] for r in runs) for runs in (a_runs, b_runs))
    worst = max(r["p99_ms"] for r in a_runs)
    print(
        f"A/B throughput = {ratio:.2f} (goal >= {GOALS['throughput']}: {_verdict(ratio, '>=', 'throughput')})"
    )
    print(f"B/A CPU per request = {cpu_b / cpu_a:.2f} (medians; A's CPU per request bounds its throughput)")
    # A and B of one round ran back to back, so their ratio holds less of the machine's drift.
    paired = sorted(a["rps"] / b["rps"] for a, b in zip(a_runs, b_runs, strict=True))
    median = statistics.median(paired)
    print(f"A/B throughput per round: median {median:.2f}, from {paired[0]:.2f} to {paired[-1]:.2f}")
    cpu_paired = sorted(b["cpu_us"] / a["cpu_us"] for a, b in zip(a_runs, b_runs, strict=True))
    median = statistics.median(cpu_paired)
    low, high = cpu_paired[0], cpu_paired[-1]
    print(f"B/A CPU per request per round: median {median:.2f}, from {low:.2f} to {high:.2f}")
    print(f"A worst p99 = {worst:.2f} ms (goal <= {GOALS['p99_ms']}: {_verdict(worst, '<=', 'p99_ms')})")
    print(f"A peak RSS = {rss:.0f} MiB (goal <= {GOALS['rss_mib']:.0f}: {_verdict(rss, '<=', 'rss_mib')})")


def _verdict(value: float, relation: str, goal: str) -> str:
    met = value >= GOALS[goal] if relation == ">=" else value <= GOALS[goal]
    return "meets" if met else "misses"


if __name__ == "__main__":
    main()
