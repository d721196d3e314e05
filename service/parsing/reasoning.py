"""Reasoning blocks open models write before they act: taken out of the reply, they become the thought.

    <think>..</think>   DeepSeek R1, Qwen3, GLM-4.5, MiniMax   (R1's template opens <think> in the
                        prompt, so a reply may hold only the closing tag: what precedes it is reasoning)
    <seed:think>..</seed:think>   Seed-OSS        [THINK]..[/THINK]   Magistral, Ministral 3
    ◁think▷..◁/think▷   Kimi VL        <|channel|>analysis<|message|>..<|end|>   GPT-OSS (harmony),
    and GPT-OSS's preamble <|channel|>commentary<|message|>..<|end|> (no recipient) before its call

What follows a block is read as the reply (a call after the reasoning is never hidden by it). A block
that opens and never closes is refused, naming the closing tag.
"""

import re
from dataclasses import dataclass

from reactstep.service.parsing.steps import FormatError

_BLOCKS: tuple[tuple[str, str], ...] = (("<think>", "</think>"), ("<thinking>", "</thinking>"))
_BLOCKS += (("<seed:think>", "</seed:think>"),)
_BLOCKS += (("[THINK]", "[/THINK]"),)
_BLOCKS += (("◁think▷", "◁/think▷"), ("<|channel|>analysis<|message|>", "<|end|>"))
# GPT-OSS's preamble before its calls: what it says it will do, read as part of the thought.
_BLOCKS += (("<|channel|>commentary<|message|>", "<|end|>"),)
_OPEN = re.compile("|".join(re.escape(opening) for opening, _ in _BLOCKS), re.IGNORECASE)
_CLOSE = re.compile("|".join(re.escape(closing) for _, closing in _BLOCKS), re.IGNORECASE)
_HARMONY_START = re.compile(r"<\|start\|>\s*assistant\s*$")
_HARMONY_LEAD = re.compile(r"<\|start\|>\s*assistant\s*")
_CLOSING = {opening.lower(): closing for opening, closing in _BLOCKS}


CLOSINGS = tuple(closing for _, closing in _BLOCKS)
# Each closing tag, found case-insensitively from a position (lower() may change a text's length).
CLOSING_TAG = {closing: re.compile(re.escape(closing), re.IGNORECASE) for closing in CLOSINGS}


def opening(text: str) -> tuple[int, str] | bool | None:
    """For a reply's start: (where its reasoning opener ends, the closing tag), False when it opens with
    none, None while more text could still make one (the thought stream asks as the reply arrives)."""
    head = text.lstrip()
    lead = _HARMONY_LEAD.match(head)
    rest = head[lead.end() :] if lead else head
    if lead is None and "<|start|>assistant".startswith(head):
        return None
    opened = _OPEN.match(rest)
    if opened is not None:
        return len(text) - len(rest) + opened.end(), _CLOSING[opened.group().lower()]
    if any(opener.lower().startswith(rest.lower()) for opener, _ in _BLOCKS):
        return None
    return False


@dataclass(frozen=True)
class Reasoned:
    """The reply with its reasoning blocks taken out, and their text (joined, stripped)."""

    body: str
    reasoning: str = ""


def split_reasoning(text: str) -> Reasoned:
    """The reply without its reasoning blocks; FormatError when a block is left open."""
    parts: list[str] = []
    kept: list[str] = []
    pos = 0
    first_open = _OPEN.search(text)
    orphan = _CLOSE.search(text)
    if orphan is not None and (first_open is None or orphan.start() < first_open.start()):
        parts.append(text[: orphan.start()])  # the template opened the block in the prompt
        pos = orphan.end()
    while (opened := _OPEN.search(text, pos)) is not None:
        kept.append(_HARMONY_START.sub("", text[pos : opened.start()]))
        closing = _CLOSING[opened.group().lower()]
        found = CLOSING_TAG[closing].search(text, opened.end())
        close = -1 if found is None else found.start()
        if close < 0:
            reasoning = _joined([*parts, text[opened.end() :]])
            raise FormatError(
                f"Your reply opens {opened.group()} and never closes it: {closing} is missing, so no "
                f"action or answer follows your reasoning. Close it with {closing}, then write the call "
                "or the answer.",
                reasoning,
            )
        parts.append(text[opened.end() : close])
        pos = close + len(closing)
    kept.append(text[pos:])
    if not parts:
        return Reasoned(text)
    return Reasoned("".join(kept).strip(), _joined(parts))


def _joined(parts: list[str]) -> str:
    return "\n\n".join(part.strip() for part in parts if part.strip())
