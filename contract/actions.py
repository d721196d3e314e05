"""POST /api/agent/execute_action: one tool call and its observation (or a write's preview)."""

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, StringConstraints

from reactstep.contract.common import (
    MAX_ARGS,
    EmbeddingModelConfig,
    ProjectId,
    SessionId,
    StrictModel,
    UserApiKeys,
)


class ExecuteActionRequest(StrictModel):
    """POST /api/agent/execute_action."""

    project_id: ProjectId
    session_id: SessionId
    tool_name: Annotated[str, StringConstraints(min_length=1, max_length=64)]
    tool_args: dict[str, Any] = Field(default_factory=dict, max_length=MAX_ARGS)
    user_api_keys: UserApiKeys = Field(default_factory=UserApiKeys)
    embedding_model_config: EmbeddingModelConfig | None = None
    approval_token: Annotated[str, StringConstraints(min_length=1, max_length=1000)] | None = None


class Approval(BaseModel):
    """A write tool's preview: nothing was written; the user's approval sends `token` back."""

    required: Literal[True]
    token: str
    diff: str
    expires_at: int


class ExecuteActionResponse(BaseModel):
    """A tool's observation."""

    session_id: str
    tool_name: str
    observation: str
    is_error: bool
    execution_time_ms: float
    approval: Approval | None = Field(None, exclude_if=lambda value: value is None)
