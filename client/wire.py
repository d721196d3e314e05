"""The bodies the library reads, typed: reactstep.contract's models, and stand-ins of the library's
own for the project routes and events until the contract holds them.

The stand-ins keep fields this library does not know yet (`extra="allow"`), so a newer server's
answer still parses.
"""

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from reactstep.contract.actions import Approval, ExecuteActionRequest, ExecuteActionResponse
from reactstep.contract.step import ActionDetails, ClientTool, LLMConfig, ReactStepRequest, ReactStepResponse

__all__ = [
    "ActionDetails",
    "Approval",
    "ClientTool",
    "ExecuteActionRequest",
    "ExecuteActionResponse",
    "LLMConfig",
    "ReactStepRequest",
    "ReactStepResponse",
]


def wire_of(model: BaseModel) -> dict[str, Any]:
    """An answer as the server sent it (the fields it left out stay out)."""
    return model.model_dump(mode="json", exclude_unset=True)


class Answer(BaseModel):
    """A body the server sends: known fields typed, unknown ones kept."""

    model_config = ConfigDict(extra="allow")


class ProjectReport(Answer):
    """GET or PUT /api/projects/{id}."""

    project_id: str
    files: int
    version: int
    created: float
    index_state: str | None = None


class StoredFile(Answer):
    """PUT /api/projects/{id}/files/{path}."""

    path: str
    version: int
    etag: str | None = None
    sha256: str | None = None
    changed: bool = True


class SyncConflict(Answer):
    """A path a tool wrote after the client's base version, where the client holds other bytes."""

    path: str
    version: int
    sha256: str | None = None
    etag: str | None = None


class SyncPlan(Answer):
    """POST /api/projects/{id}/sync."""

    version: int
    head_version: int = 0
    upload: list[str] = Field(default_factory=list)
    etags: dict[str, str | None] = Field(default_factory=dict)
    delete: list[str] = Field(default_factory=list)
    deleted: list[str] = Field(default_factory=list)
    conflicts: list[SyncConflict] = Field(default_factory=list)


class ChangeItem(Answer):
    """One entry of the project's change journal."""

    version: int
    path: str
    sha256: str | None
    origin: str


class Changes(Answer):
    """GET /api/projects/{id}/changes, every page followed."""

    version: int
    changes: list[ChangeItem]


class IndexResult(Answer):
    """POST /api/projects/{id}/index (or its stream's `result` event)."""

    project_id: str
    files: int = 0
    chunks: int = 0
    embedded: int = 0


class ThoughtEvent(Answer):
    """`thought`: a piece of the step's thought as the model writes it."""

    event: Literal["thought"] = "thought"
    delta: str


class IndexProgress(Answer):
    """`progress`: how far an index run is."""

    event: Literal["progress"] = "progress"
    phase: str
    files_done: int = 0
    files_total: int = 0
    chunks_done: int = 0
    chunks_total: int = 0
    path: str = ""


class StepResult(Answer):
    """`result`: the step's answer, the stream's last event."""

    event: Literal["result"] = "result"
    response: ReactStepResponse


class OtherEvent(Answer):
    """An event this library does not know yet, kept as it came."""

    event: str
    data: dict[str, Any]


StepEvent = ThoughtEvent | StepResult | OtherEvent


def step_event(name: str, data: dict[str, Any]) -> StepEvent:
    """One event of a streamed step, typed."""
    if name == "thought":
        return ThoughtEvent.model_validate(data)
    if name == "result":
        return StepResult(response=ReactStepResponse.model_validate(data))
    return OtherEvent(event=name, data=data)
