"""The `conversation_history` of a react_step request: the steps so far, each kind of item, and the
parsed tool call (ActionDetails) that a step proposes and a completed step carries back."""

from typing import Annotated, Any, Literal

from pydantic import Discriminator, Field, StringConstraints, Tag

from reactstep.contract.common import MAX_ARGS, StrictModel, at_most

Executor = Literal["server", "client"]
# Bounds of what a client sends back in conversation_history (a model reply is cut well below it).
HistoryText = Annotated[str, StringConstraints(max_length=200_000)]
MAX_HISTORY_ITEMS = 200  # ~100 turns: more than any context window holds once rendered


class ActionDetails(StrictModel):
    """A parsed tool call."""

    tool_name: Annotated[str, StringConstraints(max_length=64)]
    tool_args: Annotated[dict[str, Any], at_most(MAX_ARGS)] = Field(max_length=MAX_ARGS)
    """Keyword arguments, checked against the tool's JSON Schema."""
    raw_action_string: HistoryText
    """The action as the model wrote it, e.g. `Action: read_file(file_path="src/app.py")`."""
    executor: Executor = "server"
    """`server`: call POST /api/agent/execute_action. `client`: a tool from `client_tools`; the
    client runs it and makes the observation itself.
    """
    # Left out of the JSON when false, so steps recorded before write tools existed compare equal.
    requires_approval: bool = Field(False, exclude_if=lambda value: not value)
    """true for a server write tool (create_file, edit_file, replace_in_file, edit_lines):
    execute_action first answers with a preview that the user must approve before the same
    call, with its `approval_token`, writes (see execute_action). Left out when false.
    """


class CompletedStep(StrictModel):
    """A step whose action ran, with what it observed."""

    thought: HistoryText = ""
    """The step's `thought` from react_step."""
    action_details: ActionDetails
    observation: HistoryText
    """The observation from execute_action, or the client tool's output."""
    is_error: bool = False
    """Whether the tool failed; the model is told so."""


class FormatErrorStep(StrictModel):
    """A reply that could not be parsed, and the corrective message the server wrote."""

    raw_output: HistoryText
    """The `raw_output` of the format_error response."""
    format_error: HistoryText
    """The `format_error` of the format_error response."""


class Turn(StrictModel):
    """An earlier user question or final answer."""

    role: Literal["user", "assistant"]
    content: HistoryText


def _history_kind(item: Any) -> str | None:
    """Which kind of history item this is, by the key only that kind has (None: no kind's key)."""
    keys = item if isinstance(item, dict) else vars(item) if isinstance(item, StrictModel) else {}
    for key, kind in (("action_details", "step"), ("raw_output", "format_error"), ("role", "turn")):
        if key in keys:
            return kind
    return None


# The kind is told by its key before the item is validated, so a bad item is checked against its own
# kind alone: its errors are that kind's, not every kind's (and it costs one validation, not three).
HistoryItem = Annotated[
    Annotated[CompletedStep, Tag("step")]
    | Annotated[FormatErrorStep, Tag("format_error")]
    | Annotated[Turn, Tag("turn")],
    Discriminator(
        _history_kind,
        custom_error_type="history_item_kind",
        custom_error_message="a history item is an object with action_details (a completed step), "
        "raw_output (a format error) or role (a turn)",
    ),
    Field(description="One conversation_history item; the required keys tell the kinds apart."),
]
