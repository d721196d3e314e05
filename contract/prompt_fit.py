"""How a react_step fitted its prompt into the model's context window, and how a request pins that."""

from typing import Annotated

from pydantic import ConfigDict, Field

from reactstep.contract.common import Integer, StrictModel, WireModel, nulls_left_out

Count = Annotated[Integer, Field(ge=0, le=200)]  # bounded by the history, at most 200 items


class PromptFitPin(StrictModel):
    """The fitting to apply instead of counting tokens: what a replay sends (the recorded step's
    `prompt_fit`, its `elided` and `left_out`), so the model is asked the recorded prompt again
    whatever its tokenizer and context window. The prompt is not measured, so it is never refused for
    the window; a model server may still refuse a prompt over its own.
    """

    elided: Count = 0
    """How many of the history's oldest observations and unusable replies (its CompletedStep and
    FormatErrorStep items, oldest first) to elide, as the counting fit elides them. At most as many
    as the history holds, else a 422.
    """
    left_out: Count = 0
    """How many of the history's oldest items to leave out whole. At most its length, else a 422."""


class PromptFit(WireModel):
    """How the prompt's history was fitted to the model's context window; present only when something
    was elided or left out."""

    model_config = ConfigDict(json_schema_extra=nulls_left_out)

    window: int | None = None
    """The context window in tokens the prompt was fitted to; absent when the request pinned the
    fitting (`prompt_fit` in the request: nothing was counted)."""
    elided: int
    """How many of the history's oldest observations and unusable replies were elided, oldest first
    (those among the items left out included)."""
    left_out: int
    """How many of the history's oldest items were left out whole."""
