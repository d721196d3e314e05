"""read_file over MCP next to the same call over REST, on one service.

Run: .venv/bin/python bench/mcp_overhead.py [--rounds 400]

The service runs as `reactstep serve` runs it, on the local store, on 127.0.0.1. Interleaved, in one
run, each MCP era against the same REST call:
    A  POST /mcp/bench, tools/call read_file on 2026-07-28: _meta and the Mcp-* headers, no session
    B  POST /api/agent/execute_action read_file: the same core, the same observation
    C  POST /mcp/bench, tools/call read_file as a 2025 client sends it after initialize (stateless)
with MCP answering as one JSON body (its only way). A - B and C - B are what the SDK's JSON-RPC
handling and its per-request session manager add to a call. Then the service's own CPU time per
call (user + system, from /proc), each kind of call run alone: on a loaded machine the wall-clock
times carry the waits for a CPU, the CPU times only the work.
"""

import argparse
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).parent))
from peers import Child, child, interleaved, load_average, side_by_side
from stats import machine

SOURCE = "".join(f"def function_{n}(value):\n    return value * {n}\n\n" for n in range(70)).encode()
ARGS = {"file_path": "src/module.py"}
REST = {"project_id": "bench", "session_id": "s", "tool_name": "read_file", "tool_args": ARGS}
MODERN = "2026-07-28"
META = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}
MCP = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "read_file", "arguments": ARGS}}
MCP_MODERN = {**MCP, "params": {**MCP["params"], "_meta": META}}  # type: ignore[dict-item]
ACCEPT = {"accept": "application/json, text/event-stream"}
MODERN_HEADERS = {
    **ACCEPT,
    "mcp-protocol-version": MODERN,
    "mcp-method": "tools/call",
    "mcp-name": "read_file",
}
LEGACY_HEADERS = {**ACCEPT, "mcp-protocol-version": "2025-11-25"}
GOAL = 1.3  # a call over MCP should cost at most 30 % more than the REST call


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=400)
    args = parser.parse_args()
    print(machine(), "|", load_average(), "before")
    with tempfile.TemporaryDirectory() as data:
        measure(data, args.rounds)
    print(load_average(), "after")


def measure(data: str, rounds: int) -> None:
    """A against B on one service child."""
    settings = {"data_dir": data}
    with child("service", settings=settings) as service, httpx.Client() as client:
        client.put(f"{service.url}/api/projects/bench").raise_for_status()
        client.put(f"{service.url}/api/projects/bench/files/src/module.py", content=SOURCE).raise_for_status()
        rest = client.post(f"{service.url}/api/agent/execute_action", json=REST).raise_for_status().json()
        for body, headers in ((MCP_MODERN, MODERN_HEADERS), (MCP, LEGACY_HEADERS)):
            answer = client.post(f"{service.url}/mcp/bench", json=body, headers=headers).raise_for_status()
            assert answer.json()["result"]["structuredContent"] == {"observation": rest["observation"]}

        def over_modern() -> None:
            client.post(
                f"{service.url}/mcp/bench", json=MCP_MODERN, headers=MODERN_HEADERS
            ).raise_for_status()

        def over_legacy() -> None:
            client.post(f"{service.url}/mcp/bench", json=MCP, headers=LEGACY_HEADERS).raise_for_status()

        def over_rest() -> None:
            client.post(f"{service.url}/api/agent/execute_action", json=REST).raise_for_status()

        interleaved(over_modern, over_rest, 30)  # warm-up
        interleaved(over_legacy, over_rest, 30)
        a_ms, b_ms = interleaved(over_modern, over_rest, rounds)
        c_ms, b2_ms = interleaved(over_legacy, over_rest, rounds)
        print("\n== MCP answering as JSON")
        print(
            side_by_side("MCP 2026-07-28 tools/call read_file", a_ms, "execute_action read_file", b_ms, GOAL)
        )
        print(
            side_by_side("MCP 2025 tools/call read_file", c_ms, "execute_action read_file", b2_ms, GOAL, "CB")
        )
        print("\n== the service's CPU time per call")
        cpu = {
            name: cpu_per_call(service, call, rounds)
            for name, call in (
                ("2026-07-28", over_modern),
                ("2025", over_legacy),
                ("execute_action", over_rest),
            )
        }
        for name in ("2026-07-28", "2025"):
            ratio = cpu[name] / cpu["execute_action"]
            print(
                f"MCP {name} {cpu[name]:.3f} ms / execute_action {cpu['execute_action']:.3f} ms = {ratio:.2f}"
            )
        print(f"service peak RSS {service.peak_rss_mib():.0f} MiB")


def cpu_per_call(service: Child, call: Callable[[], None], rounds: int) -> float:
    """The service's CPU milliseconds per call, over `rounds` calls made one after another."""
    started = service.cpu_seconds()
    for _ in range(rounds):
        call()
    return (service.cpu_seconds() - started) * 1000 / rounds


if __name__ == "__main__":
    main()
