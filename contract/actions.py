"""POST /api/agent/execute_action: one tool call and its observation (or a write's preview)."""

from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, StringConstraints

from reactstep.contract.common import (
    MAX_ARGS,
    EmbeddingModelConfig,
    ProjectId,
    SessionId,
    StrictModel,
    UserApiKeys,
    WireModel,
    at_most,
    nulls_left_out,
)


class ExecuteActionRequest(StrictModel):
    """POST /api/agent/execute_action."""

    project_id: ProjectId
    session_id: SessionId
    tool_name: Annotated[str, StringConstraints(min_length=1, max_length=64)]
    """A server tool (see GET /api/agent/tools)."""
    tool_args: Annotated[dict[str, Any], at_most(MAX_ARGS)] = Field({}, max_length=MAX_ARGS)
    """The tool's arguments, usually `action_details.tool_args`."""
    user_api_keys: UserApiKeys = Field(default_factory=UserApiKeys)
    embedding_model_config: EmbeddingModelConfig | None = None
    approval_token: Annotated[str, StringConstraints(min_length=1, max_length=1000)] | None = None
    """For a write tool: the `approval.token` of this exact call's preview, sent once the user
    approved its diff. Absent: the call only previews. Ignored by the other tools.
    """


class Approval(WireModel):
    """Present only on a write tool's preview: nothing was written. Show `diff` to the user; if they
    approve, repeat the same call with `approval_token` set to `token` before `expires_at`.
    """

    required: Literal[True]
    token: Annotated[str, StringConstraints(max_length=1000)]
    """Opaque and signed; send it back unchanged. It holds no file content."""
    diff: str
    """The change as a unified diff with git's headers (`--- a/<path>` / `+++ b/<path>`,
    `--- /dev/null` for a new file) and 3 lines of context.
    """
    expires_at: int
    """Unix time, in seconds, from which the token is refused (REACTSTEP_APPROVAL_TTL_S)."""


class ExecuteActionResponse(WireModel):
    """A tool's observation."""

    model_config = ConfigDict(json_schema_extra=nulls_left_out)

    session_id: str
    tool_name: str
    observation: str
    """What the model reads next; starts with "Error:" when is_error is true."""
    is_error: bool
    """The tool failed in a way the model can correct (bad arguments, missing file)."""
    execution_time_ms: float
    approval: Approval | None = Field(None, exclude_if=lambda value: value is None)
