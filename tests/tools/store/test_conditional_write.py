"""ObjectStore.put_if: the local tree and S3 (moto on loopback) write only over the expected version."""

import hashlib
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from reactstep.service.settings import Settings
from reactstep.tools.errors import StaleFile, ToolError
from reactstep.tools.store.local import LocalStore
from reactstep.tools.store.objects import ObjectStore


def md5(data: bytes) -> str:
    return hashlib.md5(data).hexdigest()


def s3_settings(endpoint: str, bucket: str) -> Settings:
    """Settings for an S3 store on a loopback endpoint with moto's fake credentials."""
    return Settings(
        storage_backend="s3",
        s3_endpoint_url=endpoint,
        s3_bucket=bucket,
        s3_access_key_id="test",
        s3_secret_access_key="test",
        s3_region="us-east-1",
    )


# what is stored first (None: nothing), the expected etag, whether the write happens
CASES: dict[str, tuple[bytes | None, Callable[[bytes | None], str | None], bool]] = {
    "absent, expected absent": (None, lambda old: None, True),
    "present, expected absent": (b"old\n", lambda old: None, False),
    "present, expected its etag": (b"old\n", lambda old: md5(old or b""), True),
    "present, expected another etag": (b"old\n", lambda old: md5(b"other"), False),
    "absent, expected an etag": (None, lambda old: md5(b"old\n"), False),
}


@pytest.mark.parametrize(("stored", "expected", "writes"), CASES.values(), ids=CASES)
def test_put_if_writes_only_over_the_expected_version(
    store: ObjectStore,
    stored: bytes | None,
    expected: Callable[[bytes | None], str | None],
    writes: bool,
) -> None:
    if stored is not None:
        store.put("p1", "src/app.py", stored)
    if writes:
        info = store.put_if("p1", "src/app.py", b"new\n", expected(stored))
        assert (info.path, info.size, info.etag) == ("src/app.py", 4, md5(b"new\n"))
        assert store.get("p1", "src/app.py") == b"new\n"
        return
    with pytest.raises(StaleFile, match=r"^src/app.py changed since the preview, so nothing was written"):
        store.put_if("p1", "src/app.py", b"new\n", expected(stored))
    head = store.head("p1", "src/app.py")
    assert (head.etag if head else None) == (md5(stored) if stored is not None else None)


def test_put_if_is_a_tool_error_the_model_reads(store: ObjectStore) -> None:
    store.put("p1", "a.txt", b"a")
    with pytest.raises(ToolError) as caught:
        store.put_if("p1", "a.txt", b"b", None)
    assert isinstance(caught.value, StaleFile)
    assert str(caught.value).endswith(
        "Propose the change again to get a fresh preview for the user to approve."
    )


def test_put_if_keeps_projects_apart(store: ObjectStore) -> None:
    store.put("p1", "a.txt", b"mine")
    store.put_if("p2", "a.txt", b"theirs", None)  # absent in p2, whatever p1 holds
    assert (store.get("p1", "a.txt"), store.get("p2", "a.txt")) == (b"mine", b"theirs")


def test_racing_threads_write_once(tmp_path: Path) -> None:
    """Of eight writers expecting the same version, exactly one writes.

    Local only: real S3 and R2 evaluate If-Match atomically, but moto's server checks the condition
    and stores the object in two steps outside any lock, so racing it would test moto.
    """
    store = LocalStore(tmp_path)
    store.put("p1", "race.txt", b"base")
    barrier = threading.Barrier(8)
    outcomes: list[str] = []

    def writer(number: int) -> None:
        barrier.wait()
        try:
            store.put_if("p1", "race.txt", f"writer {number}".encode(), md5(b"base"))
            outcomes.append(f"writer {number}")
        except StaleFile:
            outcomes.append("stale")

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    winners = [outcome for outcome in outcomes if outcome != "stale"]
    assert len(outcomes) == 8 and len(winners) == 1
    assert store.get("p1", "race.txt") == winners[0].encode()


RACER = """
import hashlib, sys
from pathlib import Path
from reactstep.tools.errors import StaleFile
from reactstep.tools.store.local import LocalStore
store = LocalStore(Path(sys.argv[1]))
sys.stdin.readline()  # every racer is loaded; go
try:
    store.put_if("p1", "race.txt", sys.argv[2].encode(), hashlib.md5(b"base").hexdigest())
    print("won")
except StaleFile:
    print("stale")
"""


def test_racing_processes_write_once_to_a_local_store(tmp_path: Path) -> None:
    """The local lock is a flock, so it holds across processes sharing one data dir, as replicas do."""
    LocalStore(tmp_path).put("p1", "race.txt", b"base")
    racers = [
        subprocess.Popen(
            [sys.executable, "-c", RACER, str(tmp_path), f"process {n}"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=Path(__file__).resolve().parents[3],
        )
        for n in range(4)
    ]
    time.sleep(0.5)  # let the interpreters load before the start signal
    for racer in racers:  # start them all before waiting for any
        assert racer.stdin is not None
        racer.stdin.write("go\n")
        racer.stdin.flush()
    outcomes = [racer.communicate(timeout=60)[0].strip() for racer in racers]
    assert sorted(outcomes) == ["stale", "stale", "stale", "won"]
    winner = outcomes.index("won")
    assert LocalStore(tmp_path).get("p1", "race.txt") == f"process {winner}".encode()
