"""on_worker: the call runs on a worker thread in the caller's context, its answer or error comes
back, and a cancelled caller waits for a call already running (as anyio's to_thread did)."""

import asyncio
import contextvars
import threading

import pytest

from reactstep.service.worker_threads import on_worker

ASKED: contextvars.ContextVar[str] = contextvars.ContextVar("asked", default="none")


def where(suffix: str) -> tuple[str, str]:
    return threading.current_thread().name, ASKED.get() + suffix


def test_the_call_runs_on_a_worker_in_the_callers_context() -> None:
    async def main() -> tuple[str, str]:
        ASKED.set("request-7")
        return await on_worker(where, "!")

    thread, seen = asyncio.run(main())
    assert thread.startswith("worker") and seen == "request-7!"


def test_an_error_comes_back_to_the_caller() -> None:
    def fail() -> None:
        raise ValueError("no such file")

    with pytest.raises(ValueError, match="no such file"):
        asyncio.run(on_worker(fail))


def test_a_cancelled_caller_waits_for_the_running_call() -> None:
    started, release = threading.Event(), threading.Event()
    finished: list[str] = []

    def slow() -> None:
        started.set()
        release.wait(5)
        finished.append("done")

    async def main() -> None:
        task = asyncio.create_task(on_worker(slow))
        await asyncio.get_running_loop().run_in_executor(None, started.wait, 5)
        task.cancel()
        await asyncio.sleep(0.05)
        assert not task.done()  # still waiting for the thread
        release.set()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert finished == ["done"]

    asyncio.run(main())
