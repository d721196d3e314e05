"""Spot a stuck loop: the same action, with the same arguments, observing the same thing, again and again.

history ─► count (tool, args, observation, is_error) over completed steps
        ─► each action seen `repeats` times or more: a warning in the prompt (loop_warning.j2)
reply   ─► proposes one of those actions again ─► status loop_detected (it is not run)
history ─► the same unusable reply answered with the same format_error `repeats` times or more
reply   ─► that reply again ─► status loop_detected (no correction will change it)
"""

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from reactstep.contract.history import ActionDetails, CompletedStep, FormatErrorStep, HistoryItem
from reactstep.service.parsing.call_syntax import render_action
from reactstep.service.step.prompt import render


@dataclass(frozen=True)
class RepeatedAction:
    """An action the history shows stuck: its call, e.g. read_file(file_path="a"), and how often it got
    the same observation."""

    key: str
    action: str
    count: int


def action_key(tool_name: str, tool_args: Mapping[str, Any]) -> str:
    """The tool and its arguments, independent of argument order."""
    return f"{tool_name}:{json.dumps(tool_args, sort_keys=True, ensure_ascii=False)}"


def repeated_actions(history: Sequence[HistoryItem], repeats: int) -> list[RepeatedAction]:
    """Actions run `repeats` times or more with the same observation, in order of first appearance."""
    counts: Counter[tuple[str, str, bool]] = Counter()
    first: dict[str, ActionDetails] = {}
    for step in history:
        if isinstance(step, CompletedStep):
            details = step.action_details
            key = action_key(details.tool_name, details.tool_args)
            counts[(key, step.observation, step.is_error)] += 1
            first.setdefault(key, details)
    found: dict[str, int] = {}
    for (key, _, _), count in counts.items():
        if count >= repeats:
            found[key] = max(found.get(key, 0), count)
    return [RepeatedAction(key, _shown(first[key]), count) for key, count in found.items()]


def repeated_format_errors(history: Sequence[HistoryItem], repeats: int) -> frozenset[tuple[str, str]]:
    """The (raw_output, format_error) pairs the history holds `repeats` times or more."""
    counts = Counter(
        (step.raw_output.strip(), step.format_error) for step in history if isinstance(step, FormatErrorStep)
    )
    return frozenset(pair for pair, count in counts.items() if count >= repeats)


def _shown(details: ActionDetails) -> str:
    return _render(details.tool_name, details.tool_args).removeprefix("Action: ")


def loop_warnings(repeated: Sequence[RepeatedAction]) -> list[str]:
    """The prompt's warning for each stuck action."""
    return [render("loop_warning", action=item.action, count=item.count) for item in repeated]


def _render(tool_name: str, tool_args: Mapping[str, Any]) -> str:
    try:
        return render_action(tool_name, tool_args)
    except (ValueError, TypeError):
        return f"{tool_name} {json.dumps(tool_args, ensure_ascii=False)}"
