"""read_file latency: the local store against S3 (moto's server on loopback), through execute_action's core.

Run: .venv/bin/python bench/read_file_latency.py [--requests 300]
S3 here is a loopback emulator, so the figure is boto3's own cost plus one local HTTP round trip;
a real bucket adds network latency on top.
"""

import argparse
import logging
import socket
import sys
import tempfile
import time
import uuid
from pathlib import Path

from moto.server import ThreadedMotoServer

sys.path.insert(0, str(Path(__file__).parent))
from stats import describe, machine

from reactstep.service.backends import open_store, s3_client
from reactstep.service.schemas import ExecuteActionRequest
from reactstep.service.settings import Settings
from reactstep.service.workspace.actions import run_execute_action
from reactstep.tools.catalog import default_registry
from reactstep.tools.registry import ToolLimits
from reactstep.tools.store.objects import ObjectStore

SOURCE = "".join(f"def function_{n}(value):\n    return value * {n}\n\n" for n in range(70)).encode()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=300)
    args = parser.parse_args()
    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # moto logs every request
    port = _free_port()
    moto = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    moto.start()
    try:
        with tempfile.TemporaryDirectory() as data:
            local = open_store(Settings(data_dir=Path(data)))
            s3 = _s3_store(f"http://127.0.0.1:{port}")
            print(machine())
            print(f"file: {len(SOURCE)} bytes, {len(SOURCE.splitlines())} lines")
            for name, store in (("local", local), ("s3 (moto, loopback)", s3)):
                print(describe(f"read_file via {name}", _measure(store, args.requests)))
    finally:
        moto.stop()


def _s3_store(endpoint: str) -> ObjectStore:
    settings = Settings(
        storage_backend="s3",
        s3_endpoint_url=endpoint,
        s3_bucket=f"bench-{uuid.uuid4().hex[:8]}",
        s3_region="us-east-1",
        s3_access_key_id="test",
        s3_secret_access_key="test",
    )
    s3_client(settings).create_bucket(Bucket=settings.s3_bucket)
    return open_store(settings)


def _measure(store: ObjectStore, count: int) -> list[float]:
    store.put("bench", "src/module.py", SOURCE)
    registry, limits = default_registry(), ToolLimits()
    request = ExecuteActionRequest(
        project_id="bench",
        session_id="s",
        tool_name="read_file",
        tool_args={"file_path": "src/module.py"},
    )
    samples = []
    for n in range(count + 10):
        started = time.perf_counter()
        result = run_execute_action(request, registry, store, limits)
        if n >= 10:  # the first calls warm boto3's connection pool
            samples.append((time.perf_counter() - started) * 1000)
        assert not result.is_error, result.observation
    return samples


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


if __name__ == "__main__":
    main()
