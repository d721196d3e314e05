"""read_file over MCP next to the same call over REST, on one service.

Run: .venv/bin/python bench/mcp_overhead.py [--rounds 400]

The service runs as `reactstep serve` runs it, on the local store, on 127.0.0.1. Interleaved:
    A  POST /mcp/bench, tools/call read_file (stateless: no session, no initialize needed)
    B  POST /api/agent/execute_action read_file: the same core, the same observation
with MCP answering as one JSON body (its only way). A - B is what the SDK's JSON-RPC handling and its
per-request session manager add to a call.
"""

import argparse
import sys
import tempfile
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).parent))
from peers import child, interleaved, load_average, side_by_side
from stats import machine

SOURCE = "".join(f"def function_{n}(value):\n    return value * {n}\n\n" for n in range(70)).encode()
ARGS = {"file_path": "src/module.py"}
REST = {"project_id": "bench", "session_id": "s", "tool_name": "read_file", "tool_args": ARGS}
MCP = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "read_file", "arguments": ARGS}}
ACCEPT = {"accept": "application/json, text/event-stream"}
GOAL = 1.5  # a call over MCP should cost at most half again what the REST call costs


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
        mcp = client.post(f"{service.url}/mcp/bench", json=MCP, headers=ACCEPT).raise_for_status()
        assert rest["observation"] in mcp.text.replace("\\n", "\n")

        def over_mcp() -> None:
            client.post(f"{service.url}/mcp/bench", json=MCP, headers=ACCEPT).raise_for_status()

        def over_rest() -> None:
            client.post(f"{service.url}/api/agent/execute_action", json=REST).raise_for_status()

        interleaved(over_mcp, over_rest, 30)  # warm-up
        a_ms, b_ms = interleaved(over_mcp, over_rest, rounds)
        print("\n== MCP answering as JSON")
        print(side_by_side("MCP tools/call read_file", a_ms, "execute_action read_file", b_ms, GOAL))
        print(f"service peak RSS {service.peak_rss_mib():.0f} MiB")


if __name__ == "__main__":
    main()
