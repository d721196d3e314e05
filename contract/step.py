"""POST /api/agent/react_step: the request, the step's outcome, its stream event and background answer."""

from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, StringConstraints, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

from reactstep.contract.common import (
    MAX_ARGS,
    Integer,
    ProjectId,
    SessionId,
    StrictModel,
    UserApiKeys,
    WireModel,
    at_most,
    nulls_left_out,
)
from reactstep.contract.history import (
    MAX_HISTORY_ITEMS,
    ActionDetails,
    CompletedStep,
    FormatErrorStep,
    HistoryItem,
)
from reactstep.contract.llm_config import LLMConfig
from reactstep.contract.prompt_fit import PromptFit, PromptFitPin
from reactstep.contract.step_report import KeyBudget, LLMRequestSeen, Timing, Usage

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
MAX_CLIENT_TOOLS = 50


class ClientTool(StrictModel):
    """A tool the client runs itself, declared for one request."""

    name: ToolName
    description: Annotated[str, StringConstraints(max_length=4_000)] = ""
    category: Literal["search", "reading", "writing", "execution"] = "execution"
    """The manifest section the tool is listed under."""
    parameters: Annotated[dict[str, Any], at_most(MAX_ARGS)] = Field(
        default_factory=lambda: {"type": "object"},
        max_length=MAX_ARGS,
        json_schema_extra={
            "default": {"type": "object"},
            "required": ["type"],
            "properties": {"type": {"const": "object"}},
        },
    )
    """A valid JSON Schema (2020-12) of the arguments, with "type" "object"."""

    @field_validator("parameters")
    @classmethod
    def _is_object_schema(cls, parameters: dict[str, Any]) -> dict[str, Any]:
        if parameters.get("type") != "object":
            raise ValueError('parameters must be a JSON Schema with "type": "object"')
        return parameters


class ReactStepRequest(StrictModel):
    """POST /api/agent/react_step."""

    project_id: ProjectId
    session_id: SessionId
    user_query: Annotated[str, StringConstraints(min_length=1, max_length=20_000)]
    """The question being answered now."""
    conversation_history: list[HistoryItem] = Field([], max_length=MAX_HISTORY_ITEMS)
    """The steps so far, oldest first, exactly as the endpoints returned them. Each item is one of:

    - `CompletedStep` `{thought, action_details, observation, is_error}`: `thought` and
      `action_details` from the react_step response, `observation` and `is_error` from
      execute_action (or from the client's own run of a `client` tool).
    - `FormatErrorStep` `{raw_output, format_error}`: both from a react_step response whose status
      was `format_error`.
    - `Turn` `{role, content}`: an earlier user question (`user`) or final answer (`assistant`).

    How the server renders it: every item up to and including the last `Turn`, then the current
    `user_query`, then the items after the last `Turn` (this question's steps). So while one
    question is being answered the client only appends steps; to ask another question it records
    the finished one as Turns (`{role: user, content: <question>}`, optionally that question's
    steps, `{role: assistant, content: <final_answer>}`) and sends the new question as `user_query`.
    At most 200 items; more is a 422.
    """
    available_tools_prompt_segment: Annotated[str, StringConstraints(max_length=50_000)] | None = None
    """The tool manifest text to show the model instead of the server's own (seeds/001). When
    absent or null the server renders its tools plus `client_tools` (see GET /api/agent/tools).
    """
    client_tools: list[ClientTool] = Field([], max_length=MAX_CLIENT_TOOLS)
    """Tools the client runs itself, for this request only. A proposed call of one has
    `executor: client`. A name equal to a server tool's, or to another client tool's, is a 422.
    """
    llm_config: LLMConfig = Field(default_factory=LLMConfig)
    user_api_keys: UserApiKeys = Field(default_factory=UserApiKeys)
    max_iterations_left: Integer = Field(10, ge=0, le=1_000)
    """Steps the client still allows. 0: no LLM call, status `max_iterations_reached`. 1: the
    prompt tells the model this is its last step and to give a Final Answer.
    """
    stream: bool = False
    """Answer as Server-Sent Events (`text/event-stream`): thought deltas, then one `result` or
    `error` event. See the operation's description.
    """
    background: bool = False
    """Run the step apart from this connection (background steps): answered 202 with a
    `step_id` whose answer GET /api/agent/steps/{step_id} gives, from any replica, for
    REACTSTEP_STEP_RESULTS_TTL_S. With `stream: true` the answer is the step's events, each with an
    `id:`; the first, `step`, names the step, and GET /api/agent/steps/{step_id}/events with
    `Last-Event-ID` sends the rest after a dropped connection, without asking the model again.
    """
    include_llm_request: bool = False
    """Put the text of what the LLM was asked (`llm_request.rendered`) in the answer, beside its
    hashes: what a recorded trace keeps so that a replay can show a diff.
    """
    include_project_overview: bool = False
    """Add the project overview built at index time to the system prompt, cut at a whole line to
    8,000 characters (a `notes` entry says when it was cut). A
    project not indexed yet gets a sentence saying no overview is available; that is not an error.
    """
    prompt_fit: PromptFitPin | None = None
    """Fit the history as told instead of by counting tokens: what a replay sends (the recorded
    step's `prompt_fit`). Absent or null: the server counts and fits to the model's window.
    `elided` may not pass the history's observations and unusable replies, nor `left_out` its
    length (422 `validation_failed`).
    """

    @field_validator("prompt_fit")
    @classmethod
    def _pin_within_history(cls, pin: PromptFitPin | None, info: ValidationInfo) -> PromptFitPin | None:
        history = info.data.get("conversation_history")
        if pin is None or history is None:
            return pin
        bulky = sum(isinstance(item, CompletedStep | FormatErrorStep) for item in history)
        if pin.elided > bulky:
            raise PydanticCustomError(
                "prompt_fit_elided",
                "elided is {elided}, but conversation_history holds {bulky} observations and unusable "
                "replies to elide",
                {"elided": pin.elided, "bulky": bulky},
            )
        if pin.left_out > len(history):
            raise PydanticCustomError(
                "prompt_fit_left_out",
                "left_out is {left_out}, but conversation_history holds {items} items",
                {"left_out": pin.left_out, "items": len(history)},
            )
        return pin


def _required_by_status(status: str, *keys: str, **more: Any) -> dict[str, Any]:
    return {"if": {"properties": {"status": {"const": status}}}, "then": {"required": list(keys), **more}}


def _response_schema(schema: dict[str, Any]) -> None:
    """The keys each status brings (a key left out is never null)."""
    nulls_left_out(schema)
    left_out = ["action_details", "final_answer", "raw_output", "format_error", "model", "tool_calling"]
    schema["allOf"] = [
        _required_by_status("action_proposed", "action_details", "raw_output", "model"),
        _required_by_status("final_answer", "final_answer", "raw_output", "model"),
        _required_by_status("format_error", "raw_output", "format_error", "model"),
        _required_by_status("truncated_output", "raw_output", "format_error", "model", "notes"),
        _required_by_status(
            "loop_detected",
            "raw_output",
            "model",
            "notes",
            oneOf=[{"required": ["action_details"]}, {"required": ["format_error"]}],
        ),
        {
            "if": {"properties": {"status": {"const": "max_iterations_reached"}}},
            "then": {"not": {"anyOf": [{"required": [key]} for key in left_out]}},
        },
    ]


class ReactStepResponse(WireModel):
    """One step's outcome. Keys whose value would be null are left out; `thought`, `usage` and
    `timing` are always present.
    """

    model_config = ConfigDict(json_schema_extra=_response_schema)

    session_id: str
    """The request's session_id."""
    status: Status
    """- `action_proposed`: run `action_details` (see `executor`), append a CompletedStep, step
      again.
    - `final_answer`: `final_answer` answers the question; the loop ends.
    - `format_error`: the reply could not be parsed; append `{raw_output, format_error}` as
      a FormatErrorStep and step again.
    - `max_iterations_reached`: the request had `max_iterations_left: 0`; the LLM was not
      called and the loop ends without an answer.
    - `truncated_output`: the reply reached `max_tokens` before its action or answer was
      complete; `thought` is the partial thought. Append `{raw_output, format_error}` as a
      FormatErrorStep and step again (perhaps with a larger `llm_config.max_tokens`).
    - `loop_detected`: the model proposed again an action the history shows run
      3 times with the same observation, after the prompt warned it;
      `action_details` is that action, not to be run. Or the model sent again a reply the
      history shows refused 3 times with the same `format_error`; that
      message is repeated and there is no `action_details`. The loop ends without an answer.
    """
    thought: str = ""
    """The model's reasoning before its action or answer ('' if none)."""
    action_details: ActionDetails | None = None
    final_answer: str | None = None
    """Present when status is final_answer."""
    raw_output: str | None = None
    """The model's reply as received; present when the LLM was called."""
    format_error: str | None = None
    """Present when status is format_error or truncated_output: the corrective message the
    model reads next (and with loop_detected when the repeated reply was unusable).
    """
    model: str | None = None
    """The litellm model that answered; present when the LLM was called."""
    tool_calling: Literal["text", "native"] | None = None
    """How the tools were offered (`auto` resolved); present when the LLM was called."""
    tool_results: Literal["messages", "text"] | None = None
    """How a native step sent the earlier steps (see llm_config.tool_results); present when a
    native step called the LLM."""
    usage: Usage = Field(default_factory=Usage)
    timing: Timing = Field(default_factory=Timing)
    budget: KeyBudget | None = None
    """What the caller's service key has left; present when the LLM was called on a key with
    limits (a step that lends its own LLM key in user_api_keys is not counted)."""
    notes: list[str] | None = None
    """What the server did to the prompt or reply beyond the plain step: observations cut or
    elided to fit, stop sequences dropped, extra tool calls ignored, truncation, a loop.
    Absent when there is nothing to say.
    """
    llm_request: LLMRequestSeen | None = None
    """What the LLM was asked; present when the LLM was called."""
    prompt_fit: PromptFit | None = None
    """How the history was fitted to the context window (oldest observations and unusable replies
    elided, oldest items left out); absent when it was sent whole. A replay sends it back."""
    prompt: list[dict[str, Any]] | None = None
    """The messages sent to the model (in native mode with `tool_calls` and `tool` messages);
    present only when the server runs with REACTSTEP_DEBUG_PROMPT=true.
    """


class ThoughtEvent(StrictModel):
    """The data of a `thought` event in a react_step stream."""

    delta: Annotated[str, StringConstraints(min_length=1)]
    """The next piece of the thought; the pieces, joined, are the thought so far."""


class StepAccepted(WireModel):
    """A background step: the 202 of react_step and of GET /api/agent/steps/{step_id} while it runs,
    and the data of a background stream's first event (`step`)."""

    step_id: str
    """Opaque and unguessable; only the service key that started the step may read it."""
    status: Literal["running"]
