"""CPU per read_file request inside the app, next to a bare Starlette app: no sockets, no server.

Run: .venv/bin/python bench/request_cpu.py [--requests 2000] [--rounds 8]

Both apps are called as ASGI in this process (the service as `reactstep serve` builds it, its log
lines going to /dev/null), alternately, `--rounds` times `--requests` POSTs of read_file; each
round is timed in this thread's CPU time, so other processes on a shared machine barely move it.
Printed: the least and the median microseconds per request of each, and their difference, which is
what the service's own layers cost (ids, log line, metrics, auth, admission, validation, the tool).
The file is read 10 s after it was written: a local store trusts a kept copy only once the file's
times are 2 s in the past (tools/store/memos.py), so earlier reads go to the disk.
"""

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from read_file_latency import READ, SOURCE
from stats import machine

BODY = json.dumps(READ).encode()
SETTLE_S = 10.0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=8)
    args = parser.parse_args()
    import uvloop

    print(machine())
    uvloop.run(_measure(args.requests, args.rounds))


async def _measure(requests: int, rounds: int) -> None:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    from reactstep.service.http.app import create_app
    from reactstep.service.logs.writing import configure_logging
    from reactstep.service.settings import Settings

    configure_logging("info", "json", open("/dev/null", "w"))  # noqa: SIM115 - the process's log stream
    with tempfile.TemporaryDirectory() as data:
        service = create_app(Settings(data_dir=Path(data)))
        async with service.router.lifespan_context(service):
            await _call(service, "PUT", "/api/projects/bench")
            await _call(service, "PUT", "/api/projects/bench/files/src/module.py", SOURCE)
            answer = json.loads((await _call(service, "POST", "/api/agent/execute_action", BODY))[-1]["body"])

            async def endpoint(request: Request) -> JSONResponse:
                await request.body()
                return JSONResponse(answer)

            bare = Starlette(routes=[Route("/{path:path}", endpoint, methods=["POST"])])
            await asyncio.sleep(SETTLE_S)
            us: dict[str, list[float]] = {"service": [], "bare": []}
            for _ in range(rounds):
                for name, app in (("service", service), ("bare", bare)):
                    for _ in range(requests // 10):  # warm
                        await _call(app, "POST", "/api/agent/execute_action", BODY)
                    started = time.thread_time()
                    for _ in range(requests):
                        await _call(app, "POST", "/api/agent/execute_action", BODY)
                    us[name].append((time.thread_time() - started) / requests * 1e6)
    for name, samples in us.items():
        print(
            f"{name:>7}: least {min(samples):.1f} us, median {statistics.median(samples):.1f} us per request"
        )
    print(f"the service's own layers: {min(us['service']) - min(us['bare']):.1f} us per request (least)")


async def _call(app: Any, method: str, path: str, body: bytes = b"") -> list[dict[str, Any]]:
    sent: list[dict[str, Any]] = []
    messages = [{"type": "http.request", "body": body, "more_body": False}]

    async def receive() -> dict[str, Any]:
        return messages.pop() if messages else {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    headers = [(b"host", b"bench"), (b"content-type", b"application/json")]
    headers.append((b"content-length", str(len(body)).encode()))
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": headers,
        "client": ("127.0.0.1", 1),
        "server": ("127.0.0.1", 2),
        "state": {},
    }
    await app(scope, receive, send)
    return sent


if __name__ == "__main__":
    main()
