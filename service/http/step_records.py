"""A background step as the object store keeps it, so that any replica can answer for it.

    step id   "<project_id>~<32 random URL-safe characters>": unguessable, and it names the project
              whose index files hold the record (.reactstep-index/<project_id>/step-<random>)
    running   written before the step's 202 (or its stream's first event): who owns it, and the
              time after which a replica that never finished it counts as gone (lost_after)
    done      written once the step's last event is out: its answer (status and body), every
              event it sent, and the time it expires (finished + REACTSTEP_STEP_RESULTS_TTL_S)

A record is the caller's alone: `owner` is a digest of the service key that started the step, and
a read by another key is answered as if there were no such step. An expired record is deleted
when next read (a deleted project takes its records with it).
"""

import hmac
import json
import re
import secrets
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from reactstep.service.errors import NotFound, StepLost
from reactstep.tools.store.objects import ObjectStore

STEP_ID = re.compile(r"(?P<project>[A-Za-z0-9][A-Za-z0-9._-]{0,127})~(?P<token>[A-Za-z0-9_-]{32})")
RECORD_PREFIX = "step-"
LOST_MARGIN_S = 30.0  # past the step's own deadline, a running record whose replica is gone is lost


@dataclass(frozen=True)
class StepId:
    """A step id, split into the project holding its record and its random part."""

    project_id: str
    token: str

    @property
    def text(self) -> str:
        return f"{self.project_id}~{self.token}"

    @property
    def record_name(self) -> str:
        return RECORD_PREFIX + self.token


def new_step_id(project_id: str) -> StepId:
    """A fresh id (192 random bits) for a step of this project."""
    return StepId(project_id, secrets.token_urlsafe(24))


def parse_step_id(text: str) -> StepId:
    """The id in a URL; 404 step_not_found for anything that cannot be one."""
    match = STEP_ID.fullmatch(text)
    if match is None:
        raise NotFound(f"no step {text[:200]!r}", code="step_not_found")
    return StepId(match["project"], match["token"])


@dataclass(frozen=True)
class StepRecord:
    """What the store holds for one step (see the module's docstring)."""

    owner: str
    state: Literal["running", "done"]
    started: float
    lost_after: float
    expires: float = 0.0
    status: int = 0
    body: dict[str, Any] = field(default_factory=dict)
    events: list[str] = field(default_factory=list)
    """Every event the step sent, in order, each as SSE text without its id (the id is its index)."""

    def encoded(self) -> bytes:
        return json.dumps(asdict(self), ensure_ascii=False, separators=(",", ":")).encode()


def running_record(owner: str, deadline_s: float) -> StepRecord:
    """The record of a step that starts now and must end within deadline_s."""
    now = time.time()
    return StepRecord(owner, "running", now, now + deadline_s + LOST_MARGIN_S)


def done_record(
    running: StepRecord, status: int, body: dict[str, Any], events: list[str], ttl_s: float
) -> StepRecord:
    """The record of the same step, finished now with this answer."""
    now = time.time()
    return StepRecord(
        running.owner, "done", running.started, running.lost_after, now + ttl_s, status, body, events
    )


def save_record(store: ObjectStore, step: StepId, record: StepRecord) -> None:
    """Write (or overwrite) the step's record."""
    store.put_index_file(step.project_id, step.record_name, record.encoded())


def load_record(store: ObjectStore, step: StepId, owner: str) -> StepRecord:
    """The step's record as its owner may see it; 404 step_not_found when missing, expired or
    another key's, StepLost when its replica stopped before finishing it."""
    data = store.get_index_file(step.project_id, step.record_name)
    if data is None:
        raise NotFound(f"no step {step.text!r}: never started, or its answer expired", code="step_not_found")
    record = StepRecord(**json.loads(data))
    if not hmac.compare_digest(record.owner, owner):
        raise NotFound(f"no step {step.text!r}: never started, or its answer expired", code="step_not_found")
    now = time.time()
    if record.state == "done" and now >= record.expires:
        store.delete_index_file(step.project_id, step.record_name)
        raise NotFound(f"no step {step.text!r}: never started, or its answer expired", code="step_not_found")
    if record.state == "running" and now >= record.lost_after:
        raise StepLost(f"step {step.text!r} was lost: the server running it stopped; take the step again")
    return record


def delete_record(store: ObjectStore, step: StepId) -> None:
    """Forget the step (a missing record is fine)."""
    store.delete_index_file(step.project_id, step.record_name)
