"""The processes a side-by-side benchmark talks to, each a child on 127.0.0.1, and how to measure them.

    python bench/peers.py llm [DELAY_S]   an OpenAI-compatible chat server that always gives REPLY
    python bench/peers.py service         the service, configured from REACTSTEP_* variables
    python bench/peers.py service_routed  the same, every route through Starlette's router (no direct.py)
    python bench/peers.py bare JSON_FILE  a bare Starlette app answering every POST with that JSON
    python bench/peers.py s3              an S3-speaking server (moto's) on loopback
    python bench/peers.py relay ARGS_FILE a bare Starlette app that, for every POST, reads the body
                                          and makes the litellm.completion call in ARGS_FILE on a
                                          worker thread: the least any server doing a step can do
    python bench/peers.py s3_relay FILE   the same for a read: boto3 get_object of the key in FILE on
                                          a worker thread, then the answer in FILE
Each child prints its URL on its first line once it listens. The service and the bare app run under
the same uvicorn flags as `reactstep serve`, so the two differ only in what the app does.
"""

import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from stats import percentile

REPLY = 'Thought: I should read the app.\nAction: read_file(file_path="src/app.py")'


@contextmanager
def child(role: str, *arguments: str, settings: dict[str, Any] | None = None) -> Iterator["Child"]:
    """Start `peers.py role arguments` with REACTSTEP_* settings; stop it on leaving."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("REACTSTEP_")}
    env.update({f"REACTSTEP_{key.upper()}": str(value) for key, value in (settings or {}).items()})
    command = [sys.executable, __file__, role, *arguments]
    # The service logs a line per request (as `reactstep serve` does); a file takes them, not our output.
    with tempfile.TemporaryFile("w+") as log:
        process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=log, text=True)
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        try:
            if not url.startswith("http://127.0.0.1:"):
                log.seek(0)
                raise RuntimeError(f"peers.py {role} did not start: {url!r}\n{log.read()[-4000:]}")
            yield Child(process, url)
        finally:
            process.terminate()
            process.wait(timeout=10)


class Child:
    """A running child process and the URL it serves."""

    def __init__(self, process: subprocess.Popen[str], url: str) -> None:
        self.process = process
        self.url = url

    def peak_rss_mib(self) -> float:
        """The process's peak resident set size (VmHWM), in MiB."""
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
        raise RuntimeError("no VmHWM in /proc status")

    def cpu_seconds(self) -> float:
        """CPU time the process has used so far, user and system (its threads included)."""
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rpartition(")")[2].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime


def interleaved(a: Callable[[], None], b: Callable[[], None], rounds: int) -> tuple[list[float], list[float]]:
    """Time `a` and `b` alternately (ABBA...) so drift in the machine's load hits both alike; ms.

    Back to back, with no pause: on a virtual machine an idle pause lets the CPUs sleep, and the
    wake-up then lands inside the next call timed (5 ms pauses doubled react_step's time here).
    """
    a_ms: list[float] = []
    b_ms: list[float] = []
    for n in range(rounds):
        order = ((a, a_ms), (b, b_ms)) if n % 2 == 0 else ((b, b_ms), (a, a_ms))
        for call, samples in order:
            started = time.perf_counter()
            call()
            samples.append((time.perf_counter() - started) * 1000)
    return a_ms, b_ms


def side_by_side(
    name_a: str, a_ms: list[float], name_b: str, b_ms: list[float], goal: float, letters: str = "AB"
) -> str:
    """Both medians and p99s, and the A/B ratio of medians against its goal."""
    a50, b50 = percentile(a_ms, 0.5), percentile(b_ms, 0.5)
    ratio = a50 / b50
    verdict = "meets" if ratio <= goal else "misses"
    a, b = letters
    return (
        f"{a} {name_a}: p50 {a50:.2f} ms, p99 {percentile(a_ms, 0.99):.2f} ms (n={len(a_ms)})\n"
        f"{b} {name_b}: p50 {b50:.2f} ms, p99 {percentile(b_ms, 0.99):.2f} ms (n={len(b_ms)})\n"
        f"{a}/{b} = {ratio:.2f} (goal <= {goal}: {verdict})"
    )


def load_average() -> str:
    """The 1-minute load average, for the figures' context."""
    return f"load average {os.getloadavg()[0]:.2f}"


def free_port() -> int:
    """A loopback port nobody listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def serve_llm(delay_s: float) -> None:
    """Child: an OpenAI-compatible chat server that always answers REPLY after delay_s."""
    from reactstep.client.traces.scripted_replies import Reply, completion_body

    body = json.dumps(completion_body("bench", Reply(REPLY), 0)).encode()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # headers and body go out as two writes

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length") or 0))
            if delay_s:
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


def serve_service() -> None:
    """Child: the service, configured from REACTSTEP_* variables, logging as `reactstep serve` does."""
    from reactstep.service.http.app import create_app
    from reactstep.service.logs.writing import configure_logging
    from reactstep.service.settings import Settings

    settings = Settings()
    configure_logging(settings.log_level, settings.log_format)
    _serve(create_app(settings), own_logging=True)


def serve_service_routed() -> None:
    """Child: the service without http/direct.py's middleware, so every route goes through the router."""
    from reactstep.service.http.app import create_app
    from reactstep.service.http.direct import DirectRoutes
    from reactstep.service.logs.writing import configure_logging
    from reactstep.service.settings import Settings

    settings = Settings()
    configure_logging(settings.log_level, settings.log_format)
    app = create_app(settings)
    # Starlette builds its middleware stack at the first request, from this list.
    app.user_middleware = [entry for entry in app.user_middleware if entry.cls is not DirectRoutes]
    _serve(app, own_logging=True)


def serve_bare(answer_file: str) -> None:
    """Child: Starlette with one POST route that reads the body and answers the given JSON."""
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    answer = json.loads(Path(answer_file).read_text())

    async def endpoint(request: Request) -> JSONResponse:
        await request.body()
        return JSONResponse(answer)

    _serve(Starlette(routes=[Route("/{path:path}", endpoint, methods=["POST"])]))


def serve_relay(arguments_file: str) -> None:
    """Child: Starlette with one POST route that makes one fixed litellm call on a worker thread."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm
    from starlette.applications import Starlette
    from starlette.concurrency import run_in_threadpool
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    arguments = json.loads(Path(arguments_file).read_text())

    async def endpoint(request: Request) -> JSONResponse:
        await request.body()
        reply = await run_in_threadpool(lambda: litellm.completion(**arguments))
        return JSONResponse({"thought": reply.choices[0].message.content})

    _serve(Starlette(routes=[Route("/{path:path}", endpoint, methods=["POST"])]))


def serve_s3_relay(job_file: str) -> None:
    """Child: Starlette with one POST route that reads one S3 object on a worker thread and answers."""
    import boto3
    from starlette.applications import Starlette
    from starlette.concurrency import run_in_threadpool
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    job = json.loads(Path(job_file).read_text())
    s3 = boto3.client("s3", endpoint_url=job["endpoint"], region_name="us-east-1", **job["credentials"])

    async def endpoint(request: Request) -> JSONResponse:
        await request.body()
        await run_in_threadpool(lambda: s3.get_object(Bucket=job["bucket"], Key=job["key"])["Body"].read())
        return JSONResponse(job["answer"])

    _serve(Starlette(routes=[Route("/{path:path}", endpoint, methods=["POST"])]))


def serve_s3() -> None:
    """Child: moto's S3 server; it logs nothing per request."""
    import logging

    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    print(f"http://127.0.0.1:{port}", flush=True)
    threading.Event().wait()


def _serve(app: Any, own_logging: bool = False) -> None:
    """Serve `app` on a fresh loopback port with the flags of `reactstep serve` (serving.py)."""
    import uvicorn

    from reactstep.service.http.serving import uvicorn_config

    # proto=IPPROTO_TCP as uvicorn's own bind has it: asyncio sets TCP_NODELAY on accepted sockets
    # only then, and without it every keep-alive answer waits ~40 ms for a delayed ACK.
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    listener.bind(("127.0.0.1", 0))
    listener.listen(2048)
    print(f"http://127.0.0.1:{listener.getsockname()[1]}", flush=True)
    uvicorn.Server(uvicorn_config(app, log_level="warning", own_logging=own_logging)).run(sockets=[listener])


if __name__ == "__main__":
    role = sys.argv[1]
    if role == "llm":
        serve_llm(float(sys.argv[2]) if len(sys.argv) > 2 else 0.0)
    elif role == "service":
        serve_service()
    elif role == "service_routed":
        serve_service_routed()
    elif role == "bare":
        serve_bare(sys.argv[2])
    elif role == "s3":
        serve_s3()
    elif role == "relay":
        serve_relay(sys.argv[2])
    elif role == "s3_relay":
        serve_s3_relay(sys.argv[2])
    else:
        raise SystemExit(f"unknown role {role!r}")
