"""Load: concurrent react_step and execute_action(read_file) against the real app on loopback.

Run: .venv/bin/python bench/load.py [--seconds 20] [--clients 32] [--saturation-clients 96]

Three processes, all on 127.0.0.1: a fixed-reply OpenAI-compatible LLM, the service under uvicorn
(keys configured, so every request is authenticated), and this one driving clients with httpx.
    run 1  throughput: the LLM answers at once; the service's own limits are out of reach
    run 2  saturation: the LLM takes LLM_DELAY_S per call and the service admits 8 at work + 8
           waiting; the rest must get 503 overloaded at once rather than queue without bound
Each run prints requests/s, p50/p99 latency per endpoint, answers by status, the server's
peak RSS (VmHWM from /proc), and the counters of its GET /metrics at the end (histograms as count
and sum).
"""

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).parent))
from peers import child
from stats import percentile

from reactstep.service.http.auth import key_entry
from reactstep.tools.store.local import LocalStore

SERVICE_KEY = "rsk_bench-load-key-0123456789"
SATURATION = {"max_concurrent_requests": 8, "max_queue": 8}  # a queued request waits up to 10 s
LLM_DELAY_S = 1.0
STEP = {"project_id": "demo", "session_id": "load", "user_query": "What does main() return?"}
READ = {
    "project_id": "demo",
    "session_id": "load",
    "tool_name": "read_file",
    "tool_args": {"file_path": "src/app.py"},
}


@dataclass
class Tally:
    """What one run's clients saw."""

    latencies_ms: dict[str, list[float]] = field(
        default_factory=lambda: {"react_step": [], "execute_action": []}
    )
    statuses: Counter[str] = field(default_factory=Counter)
    refused_ms: list[float] = field(default_factory=list)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--saturation-clients", type=int, default=96)
    args = parser.parse_args()
    print(machine_line())
    run("throughput", args.seconds, args.clients, llm_delay_s=0.0, limits={})
    run("saturation", args.seconds, args.saturation_clients, llm_delay_s=LLM_DELAY_S, limits=SATURATION)


def run(name: str, seconds: float, clients: int, llm_delay_s: float, limits: dict[str, Any]) -> None:
    """Start the LLM and the service, drive them for `seconds`, print the figures."""
    with tempfile.TemporaryDirectory() as data, child("llm", str(llm_delay_s)) as llm:
        store = LocalStore(Path(data) / "objects")
        store.put("demo", "src/app.py", "".join(f"def f{n}():\n    return {n}\n" for n in range(40)).encode())
        settings = {
            "data_dir": data,
            "llm_model": "openai/bench",
            "llm_api_base": f"{llm.url}/v1",
            "api_keys": json.dumps([key_entry(SERVICE_KEY, "demo")]),
            **limits,
        }
        with child("service", settings=settings) as service:
            tally, elapsed = asyncio.run(drive(service.url, clients, seconds))
            peak_rss_mb = service.peak_rss_mib()
            metrics = httpx.get(f"{service.url}/metrics", headers={"authorization": f"Bearer {SERVICE_KEY}"})
    report(name, clients, limits, llm_delay_s, tally, elapsed, peak_rss_mb)
    print(metrics_excerpt(metrics.text))


async def drive(url: str, clients: int, seconds: float) -> tuple[Tally, float]:
    """`clients` loops alternating react_step and execute_action until the time is up."""
    tally = Tally()
    headers = {"authorization": f"Bearer {SERVICE_KEY}"}
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(base_url=url, headers=headers, limits=limits, timeout=60) as client:
        await warm_up(client)
        started = time.perf_counter()
        deadline = started + seconds
        await asyncio.gather(*(client_loop(client, deadline, n, tally) for n in range(clients)))
        return tally, time.perf_counter() - started


async def warm_up(client: httpx.AsyncClient) -> None:
    """One of each call first: the first step imports litellm, which is not what is measured."""
    for path, body in (("/api/agent/react_step", STEP), ("/api/agent/execute_action", READ)):
        (await client.post(path, json=body)).raise_for_status()


async def client_loop(client: httpx.AsyncClient, deadline: float, number: int, tally: Tally) -> None:
    """One client: one call at a time, alternating endpoints, until the deadline."""
    calls = [("react_step", STEP), ("execute_action", READ)]
    turn = number
    while time.perf_counter() < deadline:
        name, body = calls[turn % 2]
        turn += 1
        started = time.perf_counter()
        try:
            response = await client.post(f"/api/agent/{name}", json=body)
            status = str(response.status_code)
        except httpx.HTTPError as exc:
            status = type(exc).__name__
        elapsed_ms = (time.perf_counter() - started) * 1000
        tally.statuses[status] += 1
        if status == "200":
            tally.latencies_ms[name].append(elapsed_ms)
        elif status == "503":
            tally.refused_ms.append(elapsed_ms)
            await asyncio.sleep(0.2)  # less than Retry-After (1 s), to keep the pressure on


def report(
    name: str,
    clients: int,
    limits: dict[str, Any],
    llm_delay_s: float,
    tally: Tally,
    elapsed: float,
    peak_rss_mb: float,
) -> None:
    """Print one run's figures."""
    total = sum(tally.statuses.values())
    ok = sum(len(samples) for samples in tally.latencies_ms.values())
    print(f"\n== {name}: {clients} clients, {elapsed:.1f} s, LLM delay {llm_delay_s * 1000:.0f} ms, {limits}")
    print(f"requests: {total} ({total / elapsed:.0f}/s), answered 200: {ok} ({ok / elapsed:.0f}/s)")
    print(f"by status: {dict(sorted(tally.statuses.items()))}")
    for endpoint, samples in tally.latencies_ms.items():
        if samples:
            print(f"{endpoint} 200: {quantiles(samples)}")
    if tally.refused_ms:
        print(f"503 overloaded: {quantiles(tally.refused_ms)}")
    print(f"server peak RSS: {peak_rss_mb:.0f} MB")


def metrics_excerpt(text: str) -> str:
    """The service's counters, gauges and histogram counts and sums (no buckets, no help)."""
    keep = ("_total", "_count", "_sum", "_active", "_waiting")
    lines = [
        line
        for line in text.splitlines()
        if line.startswith("reactstep_") and line.split("{")[0].split(" ")[0].endswith(keep)
    ]
    return "/metrics:\n" + "\n".join(f"  {line}" for line in lines)


def quantiles(samples: list[float]) -> str:
    """'p50 X ms, p99 Y ms, max Z ms'."""
    p50, p99 = percentile(samples, 0.5), percentile(samples, 0.99)
    return f"p50 {p50:.1f} ms, p99 {p99:.1f} ms, max {max(samples):.1f} ms"


def machine_line() -> str:
    """CPU model, cores, memory and Python, for the figures' context."""
    cpu = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if "model name" in line
        ),
        "unknown CPU",
    )
    memory_kb = int(Path("/proc/meminfo").read_text().split()[1])
    python = sys.version.split()[0]
    return f"machine: {cpu}, {os.cpu_count()} cores, {memory_kb / 1024 / 1024:.0f} GB RAM, Python {python}"


if __name__ == "__main__":
    main()
