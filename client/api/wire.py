"""The bodies the library reads, typed: reactstep.contract's models under the names the library uses,
and the events of a streamed step as the library hands them out.
"""

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from reactstep.contract.actions import Approval, ExecuteActionRequest, ExecuteActionResponse
from reactstep.contract.history import ActionDetails
from reactstep.contract.indexing import IndexProgress
from reactstep.contract.indexing import IndexResponse as IndexResult
from reactstep.contract.llm_config import LLMConfig
from reactstep.contract.projects import ChangeItem, ProjectReport, StoredFile
from reactstep.contract.projects import ChangesResponse as Changes
from reactstep.contract.step import ClientTool, ReactStepRequest, ReactStepResponse, ThoughtEvent
from reactstep.contract.sync import SyncConflict
from reactstep.contract.sync import SyncResponse as SyncPlan

__all__ = [
    "ActionDetails",
    "Approval",
    "ChangeItem",
    "Changes",
    "ClientTool",
    "ExecuteActionRequest",
    "ExecuteActionResponse",
    "IndexProgress",
    "IndexResult",
    "LLMConfig",
    "ProjectReport",
    "ReactStepRequest",
    "ReactStepResponse",
    "StoredFile",
    "SyncConflict",
    "SyncPlan",
    "ThoughtEvent",
]


def wire_of(model: BaseModel) -> dict[str, Any]:
    """An answer as the server sent it (the fields it left out stay out)."""
    return model.model_dump(mode="json", exclude_unset=True)


class StepResult(BaseModel):
    """`result`: the step's answer, the stream's last event."""

    model_config = ConfigDict(defer_build=True)  # built at its first event, as the contract's are

    event: Literal["result"] = "result"
    response: ReactStepResponse


class OtherEvent(BaseModel):
    """An event this library does not know yet, kept as it came."""

    model_config = ConfigDict(defer_build=True)  # built at its first event, as the contract's are

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
