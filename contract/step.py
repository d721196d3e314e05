"""POST /api/agent/react_step: the request, its history items and the step's outcome."""

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, StringConstraints, field_validator

from reactstep.contract.common import (
    MAX_ARGS,
    Integer,
    ProjectId,
    SessionId,
    StrictModel,
    UserApiKeys,
)

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
ToolCallingMode = Literal["text", "native", "auto"]
# react: a reply without a call or "Final Answer:" is a format error; native_text: it is the answer.
ReplyFormat = Literal["react", "native_text"]


class LLMConfig(StrictModel):
    """Per-request overrides of the server's LLM defaults."""

    model: Annotated[str, StringConstraints(min_length=1, max_length=200)] | None = None
    temperature: float | None = Field(None, ge=0, le=2)
    max_tokens: Integer | None = Field(None, ge=1, le=32_768)
    api_base: Annotated[str, StringConstraints(max_length=500)] | None = None
    tool_calling: ToolCallingMode | None = None
    reply_format: ReplyFormat | None = None


class ClientTool(StrictModel):
    """A tool the client runs itself, declared for one request.

    The server also checks that `parameters` is a valid JSON Schema (service/schemas.py).
    """

    name: ToolName
    description: Annotated[str, StringConstraints(max_length=4_000)] = ""
    category: Literal["search", "reading", "writing", "execution"] = "execution"
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object"}, max_length=MAX_ARGS)

    @field_validator("parameters")
    @classmethod
    def _is_object_schema(cls, parameters: dict[str, Any]) -> dict[str, Any]:
        if parameters.get("type") != "object":
            raise ValueError('parameters must be a JSON Schema with "type": "object"')
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
