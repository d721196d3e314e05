"""Steps that run apart from the connection that asked for them, and the events they send, resumable.

    react_step {"background": true}       prepare (a 4xx is still a JSON answer) ─► start:
        the step's events (stream.step_events) gathered by a task of this process, and beside it
        the running record written ─► 202 {step_id, status: running} with a Location once the
        record is in; with "stream": true the answer is instead the step's events as they come,
        at once, `id: 0` a `step` event naming it
    the last event ─► followers end; the done record written (the answer and every event, after
        the running one) ─► forgotten here

    GET /api/agent/steps/{id}             running here: 202, or its answer once it has one;
                                          else the record: done ─► its status and body,
                                          running elsewhere ─► 202
    GET /api/agent/steps/{id}/events      the events after Last-Event-ID: followed live when it
        runs here; from the record when done; running elsewhere: the record is read again every
        POLL_S until it is done (or its replica is lost: an error event step_lost)
    DELETE /api/agent/steps/{id}          running here: cancelled (its model call closed); the
        record deleted; running elsewhere: 409 step_running_elsewhere (only its replica can stop it)

A running step lives only in the process running it: the server keeps no other state, and a client
that leaves (or comes back) changes nothing for it. If that process dies the step is lost: GET
answers 202 until the record's lost_after passes, then 404 step_lost.
"""

import asyncio
import json
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from starlette.responses import JSONResponse, Response

from reactstep.contract.errors import ServiceError
from reactstep.contract.step import ReactStepResponse, StepAccepted
from reactstep.service.errors import Conflict, Overloaded, StepLost
from reactstep.service.http.event_stream import HEADERS, EventStreamResponse
from reactstep.service.http.step_records import (
    StepId,
    StepRecord,
    delete_record,
    done_record,
    load_record,
    new_step_id,
    running_record,
    save_record,
)
from reactstep.service.llm.protocol import LLMGateway
from reactstep.service.runtime import Runtime
from reactstep.service.step.call import step_reply
from reactstep.service.step.prepare import PreparedStep
from reactstep.service.step.stream import error_event, event, step_events
from reactstep.service.worker_threads import on_worker
from reactstep.tools.store.objects import ObjectStore

logger = logging.getLogger("reactstep")
POLL_S = 0.5  # how often a replica not running a step reads its record again while it runs
RETRY_AFTER_S = 1  # a running step's 202 says when to ask again
STEPS_PATH = "/api/agent/steps/"


@dataclass
class StepRun:
    """A step running in this process: the events sent so far, and its answer once it has one."""

    step: StepId
    record: StepRecord
    events: list[str] = field(default_factory=list)
    answer: tuple[int, dict[str, Any]] | None = None
    done: bool = False
    task: "asyncio.Task[None] | None" = None
    saving: "asyncio.Task[None] | None" = None  # the running record's write
    _changed: asyncio.Event = field(default_factory=asyncio.Event)

    def add(self, text: str) -> None:
        """One more event; whoever follows the step is woken."""
        self.events.append(text)
        self._wake()

    def finish(self) -> None:
        self.done = True
        self._wake()

    def _wake(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()

    async def follow(self, after: int) -> AsyncIterator[str]:
        """The events after index `after`, as they come, until the step is done."""
        sent = after + 1
        while True:
            changed = self._changed
            while sent < len(self.events):
                yield with_id(sent, self.events[sent])
                sent += 1
            if self.done:
                return
            await changed.wait()


class BackgroundSteps:
    """The steps this process runs, and the store their records live in."""

    def __init__(self, store: ObjectStore, results_ttl_s: float, max_running: int) -> None:
        self.store = store
        self.results_ttl_s = results_ttl_s
        self.max_running = max_running
        self.running: dict[str, StepRun] = {}  # also what keeps each task referenced while it runs

    async def start(
        self,
        owner: str,
        project_id: str,
        prepared: PreparedStep | ReactStepResponse,
        llm: LLMGateway,
        stream: bool,
    ) -> Response:
        """Start the step, save its running record, and answer 202 (or its events, when `stream`)."""
        if sum(not run.done for run in self.running.values()) >= self.max_running:
            raise Overloaded(
                f"{self.max_running} background steps already run here; try again soon",
                retry_after_s=RETRY_AFTER_S,
            )
        deadline_s = prepared.retry_policy.deadline_s if isinstance(prepared, PreparedStep) else 0.0
        run = StepRun(new_step_id(project_id), running_record(owner, deadline_s))
        self.running[run.step.text] = run
        run.add(event("step", accepted(run.step)).decode())
        # The running record is written while the model is already asked: a stream's first event
        # waits for neither; a 202 waits for the record, so that any replica knows the step at once.
        run.saving = asyncio.create_task(on_worker(save_record, self.store, run.step, run.record))
        run.task = asyncio.create_task(self._run(run, prepared, llm))
        if stream:
            return EventStreamResponse(_encoded(run.follow(-1)), headers=HEADERS)
        try:
            await asyncio.shield(run.saving)
        except ServiceError:
            await self._stop(run)  # the store refused it: no step runs that nobody can read
            raise
        location = {"location": STEPS_PATH + run.step.text, "retry-after": str(RETRY_AFTER_S)}
        return JSONResponse(accepted(run.step), status_code=202, headers=location)

    async def _run(self, run: StepRun, prepared: PreparedStep | ReactStepResponse, llm: LLMGateway) -> None:
        try:
            async for chunk in _step_events(prepared, llm):  # it ends with a result or an error event
                run.add(chunk.decode())
            run.answer = answer_of(run.events[-1])
            run.finish()  # its followers have every event; this replica answers from memory meanwhile
            status, body = run.answer
            record = done_record(run.record, status, body, run.events, self.results_ttl_s)
            await _settled(run.saving)  # the done record lands after the running one, never under it
            await on_worker(save_record, self.store, run.step, record)
        except Exception as exc:  # the store refused the record: on other replicas the step is lost
            logger.error("a background step's record was not saved", exc_info=exc)
        finally:
            run.finish()
            self.running.pop(run.step.text, None)

    async def _stop(self, run: StepRun) -> None:
        """Cancel the step's task and wait until neither it nor its first record write is at work."""
        if run.task is not None:
            run.task.cancel()
            await _settled(run.task)
        await _settled(run.saving)

    async def answer(self, step: StepId, owner: str) -> Response:
        """The step's answer once it has one, else 202 running."""
        run = self._own_run(step, owner)
        if run is not None:
            found = run.answer
        else:
            record = await on_worker(load_record, self.store, step, owner)
            found = (record.status, record.body) if record.state == "done" else None
        if found is None:
            return JSONResponse(accepted(step), status_code=202, headers={"retry-after": str(RETRY_AFTER_S)})
        return JSONResponse(found[1], status_code=found[0])

    async def events(self, step: StepId, owner: str, after: int) -> Response:
        """The step's events after index `after`; a 404 when there is no such step for this key."""
        run = self._own_run(step, owner)
        if run is not None:
            return EventStreamResponse(_encoded(run.follow(after)), headers=HEADERS)
        record = await on_worker(load_record, self.store, step, owner)  # 404s before any event
        return EventStreamResponse(_encoded(self._recorded(step, owner, record, after)), headers=HEADERS)

    async def _recorded(self, step: StepId, owner: str, record: StepRecord, after: int) -> AsyncIterator[str]:
        """A record's events after `after`, waiting for a step that runs on another replica to end."""
        try:
            while record.state != "done":
                await asyncio.sleep(POLL_S)
                record = await on_worker(load_record, self.store, step, owner)
        except StepLost as lost:
            yield error_event(lost).decode()
            return
        for index in range(after + 1, len(record.events)):
            yield with_id(index, record.events[index])

    async def cancel(self, step: StepId, owner: str) -> None:
        """Stop the step if it runs here (its model call closed) and forget it; 409
        step_running_elsewhere when another replica runs it, 404 step_not_found when there is no
        such step for this key."""
        run = self._own_run(step, owner)
        if run is not None:
            await self._stop(run)
        else:
            record = await on_worker(load_record, self.store, step, owner)
            if record.state == "running":
                raise Conflict(
                    f"step {step.text!r} runs on another replica; it can be stopped only there",
                    code="step_running_elsewhere",
                )
        await on_worker(delete_record, self.store, step)

    def _own_run(self, step: StepId, owner: str) -> StepRun | None:
        run = self.running.get(step.text)
        return run if run is not None and run.record.owner == owner else None


def accepted(step: StepId) -> dict[str, Any]:
    """The body of a 202 and of a stream's `step` event."""
    return StepAccepted(step_id=step.text, status="running").model_dump()


def with_id(index: int, text: str) -> str:
    """An event with its index as its SSE id, which a client sends back as Last-Event-ID."""
    return f"id: {index}\n{text}"


def answer_of(text: str) -> tuple[int, dict[str, Any]]:
    """The status and body a plain step would have answered, from its last event."""
    name_line, data_line = text.split("\n", 2)[:2]
    body: dict[str, Any] = json.loads(data_line.removeprefix("data: "))
    if name_line == "event: result":
        return 200, body
    return _status_of(body["error"]["code"]), body


def _status_of(code: str) -> int:
    """The HTTP status of an error code, from the tree's classes."""
    pending: list[type[ServiceError]] = [ServiceError]
    while pending:
        kind = pending.pop()
        if kind.code == code:
            return kind.status
        pending.extend(kind.__subclasses__())
    return ServiceError.status


async def _step_events(prepared: PreparedStep | ReactStepResponse, llm: LLMGateway) -> AsyncIterator[bytes]:
    """The step's events as a streamed step answers them (an answer prepare gave alone: its result)."""
    plain_answer = isinstance(prepared, PreparedStep) and prepared.context.plain_answer
    async for chunk in step_events(step_reply(prepared, llm, streamed=True), plain_answer):
        yield chunk


async def _settled(task: "asyncio.Task[None] | None") -> None:
    """Wait for a task to end, whatever its outcome (its failure is reported where it matters); a
    cancellation of the waiter itself still goes through."""
    if task is None:
        return
    if not task.done():
        await asyncio.wait({task})
    if not task.cancelled():
        task.exception()  # retrieved: asyncio does not warn of it


async def _encoded(events: AsyncIterator[str]) -> AsyncIterator[bytes]:
    async for text in events:
        yield text.encode()


def background_steps(runtime: Runtime) -> BackgroundSteps:
    """The app's background steps: as many running at once as requests may be at work."""
    settings = runtime.settings
    return BackgroundSteps(runtime.store, settings.step_results_ttl_s, settings.max_concurrent_requests)
