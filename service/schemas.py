"""The HTTP contract as pydantic models (seeds/001 names; openapi.yaml mirrors them)."""

import re
from typing import Annotated, Any, Literal

from jsonschema import Draft202012Validator, SchemaError  # type: ignore[import-untyped]
from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    SecretStr,
    StringConstraints,
    field_validator,
)

from reactstep.service.errors import ValidationFailed

PROJECT_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$"
ProjectId = Annotated[str, StringConstraints(pattern=PROJECT_ID_PATTERN)]
SessionId = Annotated[str, StringConstraints(min_length=1, max_length=128)]
# The names OpenAI-compatible providers accept for a function, hyphens and leading digits included.
ToolName = Annotated[str, StringConstraints(pattern=r"^[a-zA-Z0-9_-]{1,64}$")]
Status = Literal[
    "action_proposed",
    "final_answer",
    "format_error",
    "max_iterations_reached",
    "truncated_output",
    "loop_detected",
]
Executor = Literal["server", "client"]
# Bounds of what a client sends back in conversation_history (a model reply is cut well below it).
HistoryText = Annotated[str, StringConstraints(max_length=200_000)]
MAX_ARGS = 64  # keys of tool_args and of a client tool's parameters schema
ToolCallingMode = Literal["text", "native", "auto"]
# react: a reply without a call or "Final Answer:" is a format error; native_text: it is the answer.
ReplyFormat = Literal["react", "native_text"]


def _integral(value: Any) -> Any:
    return int(value) if isinstance(value, float) and value.is_integer() else value


# An integer as JSON Schema has it: 5.0 is the integer 5 (5.5 and "5" are still refused).
Integer = Annotated[int, BeforeValidator(_integral)]


class StrictModel(BaseModel):
    """A request model: unknown keys and wrong types are errors, not silently dropped or coerced."""

    model_config = ConfigDict(extra="forbid", strict=True)


class LLMConfig(StrictModel):
    """Per-request overrides of the server's LLM defaults."""

    model: Annotated[str, StringConstraints(min_length=1, max_length=200)] | None = None
    temperature: float | None = Field(None, ge=0, le=2)
    max_tokens: Integer | None = Field(None, ge=1, le=32_768)
    api_base: Annotated[str, StringConstraints(max_length=500)] | None = None
    tool_calling: ToolCallingMode | None = None
    reply_format: ReplyFormat | None = None


class UserApiKeys(StrictModel):
    """Keys the client lends for this request only; never logged or echoed."""

    llmKey: SecretStr | None = Field(None, max_length=500)
    embeddingKey: SecretStr | None = Field(None, max_length=500)


class EmbeddingModelConfig(StrictModel):
    """Which embedding model code_search uses (seeds/001)."""

    model: Annotated[str, StringConstraints(min_length=1, max_length=200)] | None = None
    api_base: Annotated[str, StringConstraints(max_length=500)] | None = None


class ClientTool(StrictModel):
    """A tool the client runs itself, declared for one request."""

    name: ToolName
    description: Annotated[str, StringConstraints(max_length=4_000)] = ""
    category: Literal["search", "reading", "writing", "execution"] = "execution"
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object"}, max_length=MAX_ARGS)

    @field_validator("parameters")
    @classmethod
    def _is_object_schema(cls, parameters: dict[str, Any]) -> dict[str, Any]:
        if parameters.get("type") != "object":
            raise ValueError('parameters must be a JSON Schema with "type": "object"')
        try:
            Draft202012Validator.check_schema(parameters)
        except SchemaError as exc:
            raise ValueError(f"parameters is not a valid JSON Schema: {exc.message}") from exc
        return parameters


class ActionDetails(StrictModel):
    """A parsed tool call."""

    tool_name: Annotated[str, StringConstraints(max_length=64)]
    tool_args: dict[str, Any] = Field(max_length=MAX_ARGS)
    raw_action_string: HistoryText
    executor: Executor = "server"
    # Left out of the JSON when false, so steps recorded before write tools existed compare equal.
    requires_approval: bool = Field(False, exclude_if=lambda value: not value)


class CompletedStep(StrictModel):
    """A history item: a step whose action ran, with what it observed."""

    thought: HistoryText = ""
    action_details: ActionDetails
    observation: HistoryText
    is_error: bool = False


class FormatErrorStep(StrictModel):
    """A history item: a reply that could not be parsed, and the correction sent back."""

    raw_output: HistoryText
    format_error: HistoryText


class Turn(StrictModel):
    """A history item: an earlier user question or final answer."""

    role: Literal["user", "assistant"]
    content: HistoryText


HistoryItem = CompletedStep | FormatErrorStep | Turn


class ReactStepRequest(StrictModel):
    """POST /api/agent/react_step."""

    project_id: ProjectId
    session_id: SessionId
    user_query: Annotated[str, StringConstraints(min_length=1, max_length=20_000)]
    conversation_history: list[HistoryItem] = Field(default_factory=list)
    available_tools_prompt_segment: Annotated[str, StringConstraints(max_length=50_000)] | None = None
    client_tools: list[ClientTool] = Field(default_factory=list, max_length=50)
    llm_config: LLMConfig = Field(default_factory=LLMConfig)
    user_api_keys: UserApiKeys = Field(default_factory=UserApiKeys)
    max_iterations_left: Integer = Field(10, ge=0, le=1_000)
    stream: bool = False
    include_project_overview: bool = False


class Usage(BaseModel):
    """Token counts the provider reported."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    cached_tokens: int = 0


class Timing(BaseModel):
    """Where the step's time went, in milliseconds."""

    llm_ms: float = 0.0
    total_ms: float = 0.0
    retries: int = 0


class ReactStepResponse(BaseModel):
    """One reasoning step's outcome."""

    session_id: str
    status: Status
    thought: str = ""
    action_details: ActionDetails | None = None
    final_answer: str | None = None
    raw_output: str | None = None
    format_error: str | None = None
    model: str | None = None
    tool_calling: Literal["text", "native"] | None = None
    usage: Usage = Field(default_factory=Usage)
    timing: Timing = Field(default_factory=Timing)
    notes: list[str] | None = None
    prompt: list[dict[str, Any]] | None = None


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


def check_project_id(project_id: str) -> str:
    """A project id from a URL path, or a 422 naming the rule."""
    if re.fullmatch(PROJECT_ID_PATTERN, project_id) is None:
        raise ValidationFailed(f"project_id must match {PROJECT_ID_PATTERN}")
    return project_id
