"""Load: concurrent react_step and execute_action(read_file) against the real app on loopback.

Run: .venv/bin/python bench/load.py [--seconds 20] [--clients 32] [--saturation-clients 96]

Three processes, all on 127.0.0.1: a fixed-reply OpenAI-compatible LLM, the service under uvicorn
(keys configured, so every request is authenticated), and this one driving clients with httpx.
    run 1  throughput: the LLM answers at once; the service's own limits are out of reach
    run 2  saturation: the LLM takes LLM_DELAY_S per call and the service admits 8 at work + 8
           waiting; the rest must get 503 overloaded at once rather than queue without bound
Each run prints requests/s, p50/p99 latency per endpoint, answers by status, and the server's
peak RSS (VmHWM from /proc).
"""

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).parent))
from stats import percentile

from reactstep.client.scripted_replies import Reply, completion_body
from reactstep.service.http.auth import key_entry
from reactstep.tools.store.local import LocalStore

SERVICE_KEY = "rsk_bench-load-key-0123456789"
REPLY = 'Thought: I should read the app.\nAction: read_file(file_path="src/app.py")'
SATURATION = {"max_concurrent_requests": 8, "max_queue": 8, "queue_timeout_s": 2.0}
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
    parser.add_argument("--serve-llm", type=float, metavar="DELAY_S", help=argparse.SUPPRESS)
    parser.add_argument("--serve-app", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_llm is not None:
        serve_llm(args.serve_llm)
    elif args.serve_app:
        serve_app()
    else:
        print(machine_line())
        run("throughput", args.seconds, args.clients, llm_delay_s=0.0, limits={})
        run("saturation", args.seconds, args.saturation_clients, llm_delay_s=LLM_DELAY_S, limits=SATURATION)


def run(name: str, seconds: float, clients: int, llm_delay_s: float, limits: dict[str, Any]) -> None:
    """Start the LLM and the service, drive them for `seconds`, print the figures."""
    with tempfile.TemporaryDirectory() as data:
        store = LocalStore(Path(data) / "objects")
        store.put("demo", "src/app.py", "".join(f"def f{n}():\n    return {n}\n" for n in range(40)).encode())
        llm, llm_url = start([sys.executable, __file__, "--serve-llm", str(llm_delay_s)], {})
        settings = {
            "data_dir": data,
            "llm_model": "openai/bench",
            "llm_api_base": f"{llm_url}/v1",
            "api_keys": json.dumps([key_entry(SERVICE_KEY, "demo")]),
            **limits,
        }
        app, app_url = start([sys.executable, __file__, "--serve-app"], settings)
        try:
            tally, elapsed = asyncio.run(drive(app_url, clients, seconds))
            peak_rss_mb = peak_rss_kb(app.pid) / 1024
        finally:
            for process in (app, llm):
                process.terminate()
                process.wait(timeout=10)
    report(name, clients, limits, llm_delay_s, tally, elapsed, peak_rss_mb)


def start(command: list[str], settings: dict[str, Any]) -> tuple[subprocess.Popen[str], str]:
    """A child process that prints its loopback URL on its first line once it listens."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("REACTSTEP_")}
    env.update({f"REACTSTEP_{key.upper()}": str(value) for key, value in settings.items()})
    child = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None
    url = child.stdout.readline().strip()
    if not url.startswith("http://127.0.0.1:"):
        child.kill()
        raise RuntimeError(f"{command[2]} did not start: {url!r}")
    return child, url


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


def quantiles(samples: list[float]) -> str:
    """'p50 X ms, p99 Y ms, max Z ms'."""
    p50, p99 = percentile(samples, 0.5), percentile(samples, 0.99)
    return f"p50 {p50:.1f} ms, p99 {p99:.1f} ms, max {max(samples):.1f} ms"


def peak_rss_kb(pid: int) -> int:
    """The process's peak resident set size (VmHWM), in kB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise RuntimeError("no VmHWM in /proc status")


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


def serve_llm(delay_s: float) -> None:
    """Child: an OpenAI-compatible chat server on loopback that always gives REPLY after delay_s."""
    body = json.dumps(completion_body("bench", Reply(REPLY), 0)).encode()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length") or 0))
            time.sleep(delay_s)
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet."""

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    print(f"http://127.0.0.1:{server.server_address[1]}", flush=True)
    server.serve_forever()


def serve_app() -> None:
    """Child: the service, configured from REACTSTEP_* variables, under uvicorn on loopback."""
    import socket

    import uvicorn

    from reactstep.service.http.app import create_app
    from reactstep.service.settings import Settings

    listener = socket.create_server(("127.0.0.1", 0))
    print(f"http://127.0.0.1:{listener.getsockname()[1]}", flush=True)
    config = uvicorn.Config(create_app(Settings()), log_level="warning", access_log=False, backlog=2048)
    uvicorn.Server(config).run(sockets=[listener])


if __name__ == "__main__":
    main()
