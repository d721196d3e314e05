"""Render the step's prompt and fit it into the model's context window, the same way every time.

fit_step_prompt: the history's long observations cut ─► the overview section (prompt.py) ─► the
                 prompt's parts ─► fitted by counting (below), or as the request's prompt_fit pins it
                 ─► the call with its messages, the fit to report, notes on what fitting took
observation longer than the limit ─► head + "[... N characters removed ...]" + tail
rendered prompt ─► its JSON size in bytes bounds its tokens: within the budget? done, nothing counted
                ─► else count tokens (litellm, for the model); over the budget ─► elide the oldest
                   observations and unusable replies, as few as the estimate says, recount, repeat; the
                   system prompt then says how many were elided (elision_notice.j2)
                ─► still over the window less the least room for a reply ─► leave the oldest steps out
                   whole, one by one (left_out_notice.j2)
a request that pins the fit (prompt_fit: a recorded step's) ─► that many elided and left out, rendered
                   the same way (_rendered), nothing counted: the recorded prompt again
budget = context window - max_tokens (kept for the reply), but at least half the window
tokens are counted as window.py's TokenMeter counts them
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from reactstep.contract.history import CompletedStep, FormatErrorStep, HistoryItem
from reactstep.contract.prompt_fit import PromptFit
from reactstep.contract.step import ReactStepRequest
from reactstep.service.errors import ContextWindowExceeded
from reactstep.service.llm.protocol import LLMRequest, Message
from reactstep.service.step.prompt import PromptParts, overview_section, render, render_messages
from reactstep.service.step.window import ModelWindow, TokenMeter

# (history, how many of its observations are elided, how many older items were left out) -> the messages
RenderPrompt = Callable[[Sequence[HistoryItem], int, int], list[Message]]
MAX_OBSERVATION_CHARS = 20_000  # ~5k tokens; a longer observation reaches the model as head + tail
OVERVIEW_MAX_CHARS = 8_000  # ~2,000 tokens of project overview in the system prompt


@dataclass(frozen=True)
class FittedPrompt:
    """The messages to send, and what fitting them did."""

    messages: list[Message]
    elided: int = 0  # observations and unusable replies elided, oldest first
    prompt_tokens: int | None = None  # counted only when the byte bound could not settle it
    over_by: int = 0  # tokens still over the budget after every observation was elided
    elided_replies: int = 0  # of the elided, unusable replies
    left_out: int = 0  # the oldest history items not sent at all (every observation elided was not enough)


def fit_step_prompt(
    request: ReactStepRequest,
    manifest: str,
    llm_request: LLMRequest,
    native: bool,
    warnings: list[str],
    project_overview: str | None,
    window: ModelWindow,
    plain_history: bool,
) -> tuple[LLMRequest, PromptFit | None, list[str]]:
    """The call with its messages, cut and fitted to the model's `window` (or as the request's
    prompt_fit pins it: nothing counted), what fitting did, and notes on what that took."""
    history, cut = cut_observations(request.conversation_history, MAX_OBSERVATION_CHARS)
    overview = overview_section(request, project_overview, OVERVIEW_MAX_CHARS)
    parts = PromptParts(
        manifest=manifest,
        user_query=request.user_query,
        final_step=request.max_iterations_left == 1,
        native=native,
        tool_results_as_text=plain_history,
        notices=tuple(warnings),
        overview=overview.text,
    )
    pin = request.prompt_fit
    if pin is None:
        fitted = _counted(history, _renderer(parts), llm_request, window)
    else:
        fitted = pinned_prompt(history, _renderer(parts), pin.elided, pin.left_out)
    fitted_to = window.tokens if pin is None else None
    notes = [overview.note] if overview.note else []
    if window.source and fitted_to:
        notes.append(f"The prompt was fitted to a {window.tokens:,}-token window ({window.source}).")
    if plain_history:
        notes.append(
            "The model server's chat format leaves tool results out of the prompt: the earlier steps were "
            "sent as Action / Observation turns, so the model sees its observations."
        )
    notes += _prompt_notes(cut, fitted, fitted_to, MAX_OBSERVATION_CHARS)
    fit = None
    if fitted.elided or fitted.left_out:
        fit = PromptFit(window=fitted_to, elided=fitted.elided, left_out=fitted.left_out)
    return replace(llm_request, messages=fitted.messages), fit, notes


def _counted(
    history: Sequence[HistoryItem], render_prompt: RenderPrompt, llm_request: LLMRequest, window: ModelWindow
) -> FittedPrompt:
    """The prompt fitted by counting its tokens for the model's `window`; ContextWindowExceeded for a
    prompt over the window with the whole history left out (not sent: the model server would refuse
    it, or cut it where it chose)."""
    meter = TokenMeter(llm_request.model, llm_request.tools, window.count, window.tools_tokens)
    budget = prompt_budget(window.tokens, llm_request.max_tokens)
    limit = prompt_limit(window.tokens, llm_request.max_tokens)
    fitted = fit_prompt(history, render_prompt, meter, budget, limit)
    if fitted.prompt_tokens is not None and fitted.prompt_tokens > window.tokens:
        said = window.source or "litellm's table"
        source = f"{window.setting}; raise it if the model takes more" if window.setting else said
        raise ContextWindowExceeded(
            f"the prompt is {fitted.prompt_tokens:,} tokens with no conversation history at all, over the "
            f"{window.tokens:,}-token context window of {llm_request.model} ({source}); send a shorter "
            "user_query or fewer client_tools"
        )
    return fitted


def _renderer(parts: PromptParts) -> RenderPrompt:
    """The prompt's messages for a history whose `elided` oldest observations are elided, after
    `left_out` older items not sent."""

    def render_prompt(items: Sequence[HistoryItem], elided: int, left_out: int) -> list[Message]:
        notices = parts.notices
        if left_out:
            notices = (*notices, render("left_out_notice", count=left_out))
        if elided:
            notices = (*notices, render("elision_notice", count=elided))
        return render_messages(replace(parts, notices=notices), items)

    return render_prompt


def _prompt_notes(cut: int, fitted: FittedPrompt, window: int | None, limit: int) -> list[str]:
    """What cutting and fitting did (`window`: the one fitted to; None: as the request pinned it)."""
    notes = []
    if cut:
        notes.append(f"{cut} observation(s) longer than {limit} characters were cut to head + tail.")
    how = f"to fit the {window}-token context window" if window else "as the request's prompt_fit pinned"
    if observations := fitted.elided - fitted.elided_replies:
        notes.append(f"The {observations} oldest observation(s) were elided {how}.")
    if fitted.elided_replies:
        notes.append(f"The {fitted.elided_replies} oldest unusable reply(ies) were elided {how}.")
    if fitted.left_out:
        room = " with room for a reply" if window else ""
        notes.append(f"The {fitted.left_out} oldest history item(s) were left out {how}{room}.")
    if fitted.over_by:
        notes.append(
            f"The prompt is still {fitted.over_by} tokens over its budget with every observation elided."
        )
    return notes


def prompt_budget(window: int, max_tokens: int) -> int:
    """Tokens the prompt may use: the window less the reply's room, but at least half the window."""
    return max(window - max_tokens, window // 2)


def prompt_limit(window: int, max_tokens: int) -> int:
    """Tokens past which the oldest steps are left out: the window less the least room for a reply
    (max_tokens, at most an eighth of the window)."""
    return window - min(max_tokens, window // 8)


def cut_observation(text: str, limit: int) -> str:
    """The text, or its head and tail with how many characters were removed between them."""
    if len(text) <= limit:
        return text
    head = limit // 2
    tail = limit - head
    marker = render("observation_cut", removed=len(text) - limit)
    return f"{text[:head]}\n{marker}\n{text[len(text) - tail :]}"


def cut_observations(history: Sequence[HistoryItem], limit: int) -> tuple[list[HistoryItem], int]:
    """The history with long observations cut, and how many were."""
    result: list[HistoryItem] = []
    cut = 0
    for item in history:
        if isinstance(item, CompletedStep) and len(item.observation) > limit:
            item = item.model_copy(update={"observation": cut_observation(item.observation, limit)})
            cut += 1
        result.append(item)
    return result, cut


def fit_prompt(
    history: Sequence[HistoryItem], render_prompt: RenderPrompt, meter: TokenMeter, budget: int, limit: int
) -> FittedPrompt:
    """The prompt within the budget, eliding the oldest observations and unusable replies first (the
    newest one kept: the model needs it most) when it is not; then, while it is over `limit` (the window
    less the least room a reply needs), leaving the oldest steps out whole when that keeps the newest
    observation, else eliding it too and leaving out as few of the oldest steps as that needs."""
    messages = render_prompt(history, 0, 0)
    if meter.upper_bound(messages) <= budget:
        return FittedPrompt(messages)
    tokens = meter.count(messages)
    bulky = bulky_items(history)
    older = bulky[:-1]
    elided = 0
    while tokens > budget and elided < len(older):
        elided = _enough_to_elide(history, older, elided, tokens - budget, _chars_per_token(messages, tokens))
        messages = _rendered(history, render_prompt, elided, 0)
        tokens = meter.count(messages)
    left_out = 0
    if tokens > limit:  # keep the newest observation whole if leaving older steps out makes room
        newest = bulky[-1] if bulky else len(history)
        messages, tokens, left_out = _left_out(history, elided, render_prompt, meter, limit, newest)
        if tokens > limit and bulky:  # it does not: elide it too, and leave out what must go
            elided = len(bulky)
            messages, tokens, left_out = _left_out(history, elided, render_prompt, meter, limit, len(history))
    replies = _replies(history, elided)
    return FittedPrompt(messages, elided, tokens, max(tokens - budget, 0), replies, left_out)


def pinned_prompt(
    history: Sequence[HistoryItem], render_prompt: RenderPrompt, elided: int, left_out: int
) -> FittedPrompt:
    """The prompt fitted as a request pinned it, nothing counted: the `elided` oldest observations and
    unusable replies elided and the `left_out` oldest items left out, rendered as fit_prompt renders
    them (a recorded step's prompt_fit makes the recorded prompt again, byte for byte)."""
    messages = _rendered(history, render_prompt, elided, left_out)
    return FittedPrompt(messages, elided, None, 0, _replies(history, elided), left_out)


def bulky_items(history: Sequence[HistoryItem]) -> list[int]:
    """The positions of the items elision may shorten (observations, unusable replies), oldest first."""
    return [index for index, item in enumerate(history) if _bulk(item) is not None]


def _rendered(
    history: Sequence[HistoryItem], render_prompt: RenderPrompt, elided: int, left_out: int
) -> list[Message]:
    """The one rendering of a fitted prompt: the `elided` oldest bulky items elided, the `left_out`
    oldest items not sent, and the notices counting what the model can still see was elided."""
    chosen = bulky_items(history)[:elided]
    shortened = _elide(history, chosen)
    shown = sum(index >= left_out for index in chosen)
    return render_prompt(shortened[left_out:], shown, left_out)


def _replies(history: Sequence[HistoryItem], elided: int) -> int:
    """Of the `elided` oldest bulky items, the unusable replies."""
    return sum(isinstance(history[index], FormatErrorStep) for index in bulky_items(history)[:elided])


def _left_out(
    history: Sequence[HistoryItem],
    elided: int,
    render_prompt: RenderPrompt,
    meter: TokenMeter,
    limit: int,
    most: int,
) -> tuple[list[Message], int, int]:
    """The prompt with the `elided` oldest bulky items elided and the fewest oldest items left out (at
    most `most`) that brings it within `limit`: its messages, tokens and how many were left out."""
    left_out = 0
    while True:
        messages = _rendered(history, render_prompt, elided, left_out)
        tokens = meter.count(messages)
        if tokens <= limit or left_out >= most:
            return messages, tokens, left_out
        left_out += 1


def _enough_to_elide(
    history: Sequence[HistoryItem], steps: list[int], elided: int, excess: int, chars_per_token: float
) -> int:
    """How many of the oldest observations to elide (more than now) to save about `excess` tokens."""
    saved = 0.0
    count = elided
    while count < len(steps) and (count == elided or saved < excess):
        bulk = _bulk(history[steps[count]])
        assert bulk is not None
        saved += max(len(bulk[1]) - len(_elided_text(*bulk)), 0) / chars_per_token
        count += 1
    return count


def _chars_per_token(messages: Sequence[Message], tokens: int) -> float:
    chars = sum(len(str(message.get("content") or "")) for message in messages)
    return max(chars / max(tokens, 1), 1.0)


def _elide(history: Sequence[HistoryItem], positions: Sequence[int]) -> list[HistoryItem]:
    chosen = set(positions)
    result: list[HistoryItem] = []
    for index, item in enumerate(history):
        bulk = _bulk(item) if index in chosen else None
        if bulk is not None:
            item = item.model_copy(update={bulk[0]: _elided_text(*bulk)})
        result.append(item)
    return result


def _bulk(item: HistoryItem) -> tuple[str, str] | None:
    """The field of a history item that elision may replace, and its text: a step's observation, or an
    unusable reply (a small model's rambling ones fill a 2,048-token window in two steps)."""
    if isinstance(item, CompletedStep):
        return "observation", item.observation
    if isinstance(item, FormatErrorStep):
        return "raw_output", item.raw_output
    return None


def _elided_text(field: str, text: str) -> str:
    return render("elided", what="observation" if field == "observation" else "reply", chars=len(text))
