"""Render every message the model reads from the templates in prompts/ (strict: a missing variable raises).

system.j2 (instructions + manifest.j2 or the client's segment; project_overview.j2 when asked; notices)
    | system_native.j2 (native mode)
earlier turns ... user_query.j2 ... then each step of this question ... final_step.j2 on the last step:
    text:   assistant "Thought: ...\nAction: ..."            ->  user observation.j2
    native: assistant thought + tool_calls [call_<index>]  ->  tool tool_result.j2
    both:   assistant <raw output>                          ->  user format_error.j2
Every observation is fenced in <observation>...</observation> as untrusted data (the `untrusted` filter).
The project overview section (project_overview.j2), when asked: the stored overview cut at a line to
fit.py's OVERVIEW_MAX_CHARS; a project not indexed has a section saying no overview is available.
GET /api/agent/tools shows the same manifest and each tool's JSON Schema (describe_tools).
"""

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Any

import jinja2

from reactstep.contract.history import CompletedStep, FormatErrorStep, HistoryItem, Turn
from reactstep.contract.step import ClientTool, ReactStepRequest
from reactstep.prompts import PROMPTS_DIR
from reactstep.tools.recent import Recent
from reactstep.tools.registry import Category, ToolRegistry

Message = dict[str, Any]


@dataclass(frozen=True)
class ToolPrompt:
    """How one tool is shown in the manifest."""

    name: str
    signature: str
    description: str
    example: str = ""
    category: Category = "execution"
    requires_approval: bool = False


# The manifest's sections, in order (seeds/002 Decision 5).
CATEGORY_TITLES: dict[Category, str] = {
    "search": "Search & discovery",
    "reading": "Reading",
    "writing": "Writing (every call is shown to the user, who must approve it)",
    "execution": "Execution",
}


# Text inside an observation that could open or close the <observation> fence around it.
_FENCE = re.compile(r"<(\s*/?\s*observation)", re.IGNORECASE)


def untrusted(text: str) -> str:
    """Tool output made safe to fence: '<observation' and '</observation' inside it become '&lt;...'."""
    return _FENCE.sub(r"&lt;\1", text)


@cache
def _environment() -> jinja2.Environment:
    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(PROMPTS_DIR),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
        auto_reload=False,  # templates ship with the code: no stat of the file on every render
    )
    environment.filters["untrusted"] = untrusted
    return environment


@cache
def _template(name: str) -> jinja2.Template:
    return _environment().get_template(f"{name}.j2")


def render(template: str, **variables: Any) -> str:
    """Render prompts/<template>.j2, stripped of surrounding whitespace."""
    return _template(template).render(**variables).strip()


def describe_signature(schema: dict[str, Any]) -> str:
    """'file_path: string, start_line?: integer' from a JSON Schema of arguments."""
    required = set(schema.get("required", []))
    parts = []
    for name, prop in schema.get("properties", {}).items():
        marker = "" if name in required else "?"
        parts.append(f"{name}{marker}: {_type_name(prop)}")
    return ", ".join(parts)


def _type_name(prop: dict[str, Any]) -> str:
    if "type" in prop:
        return str(prop["type"])
    variants = [str(v.get("type")) for v in prop.get("anyOf", []) if v.get("type") != "null"]
    return " | ".join(variants) or "any"


def tool_prompts(registry: ToolRegistry, client_tools: Iterable[ClientTool]) -> list[ToolPrompt]:
    """Server tools, then the request's client tools, as the manifest lists them."""
    server = [
        ToolPrompt(
            spec.name,
            describe_signature(spec.json_schema()),
            spec.description,
            spec.example,
            spec.category,
            spec.requires_approval,
        )
        for spec in registry.specs
    ]
    client = [
        ToolPrompt(tool.name, describe_signature(tool.parameters), tool.description, category=tool.category)
        for tool in client_tools
    ]
    return server + client


def render_manifest(tools: Sequence[ToolPrompt]) -> str:
    """The tool manifest text segment: tools grouped by category, numbered across groups."""
    sections = [
        (title, [tool for tool in tools if tool.category == category])
        for category, title in CATEGORY_TITLES.items()
    ]
    return render("manifest", sections=[(title, group) for title, group in sections if group])


@lru_cache(maxsize=16)
def server_manifest(registry: ToolRegistry) -> str:
    """The manifest of the server's tools alone: the same text for every step that adds none."""
    return render_manifest(tool_prompts(registry, ()))


def describe_tools(registry: ToolRegistry) -> dict[str, Any]:
    """What GET /api/agent/tools returns: the manifest's text segment and each tool's JSON Schema."""
    return {
        "prompt_segment": render_manifest(tool_prompts(registry, [])),
        "tools": [
            {
                "name": spec.name,
                "description": spec.description,
                "category": spec.category,
                "read_only": spec.read_only,
                "requires_approval": spec.requires_approval,
                "parameters": spec.json_schema(),
            }
            for spec in registry.specs
        ],
    }


def render_format_error(reason: str, tool_names: Iterable[str]) -> str:
    """The corrective message a client appends after a reply that could not be parsed."""
    return render("format_error", reason=reason, tool_names=sorted(tool_names))


@dataclass(frozen=True)
class PromptParts:
    """What one step's prompt is made of, besides the history."""

    manifest: str
    user_query: str
    final_step: bool
    native: bool = False
    tool_results_as_text: bool = False
    """In native mode, the earlier steps as Action / Observation turns rather than tool calls and tool
    results: for a model server whose chat format drops tool results."""
    notices: tuple[str, ...] = ()
    overview: str = ""  # the project overview section (overview_section), "" when not asked for


@dataclass(frozen=True)
class OverviewSection:
    """The rendered section and, when the overview had to be cut, a note saying so."""

    text: str
    note: str = ""


def overview_section(request: ReactStepRequest, overview: str | None, max_chars: int) -> OverviewSection:
    """The system prompt's overview section: "" unless asked for; the same inputs give the same text."""
    if not request.include_project_overview:
        return OverviewSection("")
    if overview is None:
        return OverviewSection(render("project_overview", overview=None, cut=False))
    kept = cut_at_line(overview.strip(), max_chars)
    cut = len(kept) < len(overview.strip())
    text = render("project_overview", overview=kept, cut=cut)
    note = (
        f"The project overview was cut to {len(kept)} of {len(overview.strip())} characters." if cut else ""
    )
    return OverviewSection(text, note)


def cut_at_line(text: str, max_chars: int) -> str:
    """`text` when it fits in `max_chars`, else its longest run of whole lines that does."""
    if len(text) <= max_chars:
        return text
    head = text[: max_chars + 1]
    end = head.rfind("\n")
    return (head[:end] if end > 0 else text[:max_chars]).rstrip()


def render_messages(parts: PromptParts, history: Sequence[HistoryItem]) -> list[Message]:
    """The whole conversation for one step; the same inputs give the same bytes."""
    messages: list[Message] = [{"role": "system", "content": _system(parts)}]
    native = parts.native and not parts.tool_results_as_text
    # The current question follows the last earlier turn; steps after it belong to this question.
    turn_positions = [i for i, item in enumerate(history) if isinstance(item, Turn)]
    split = turn_positions[-1] + 1 if turn_positions else 0
    for index, item in enumerate(history[:split]):
        messages.extend(_history_messages(item, index, native))
    messages.append({"role": "user", "content": render("user_query", user_query=parts.user_query)})
    for index, item in enumerate(history[split:], start=split):
        messages.extend(_history_messages(item, index, native))
    if parts.final_step:
        _close_with_final_step(messages)
    return messages


def _close_with_final_step(messages: list[Message]) -> None:
    """The last step's notice goes last, so the prompt up to it is the one the model server evaluated
    (and may have cached) the step before. It joins a closing user message, or follows a tool result as
    one of its own: two user messages in a row break chat templates that want the roles to alternate."""
    notice = render("final_step")
    last = messages[-1]
    if last["role"] == "user":
        messages[-1] = {**last, "content": f"{last['content']}\n\n{notice}"}
    else:
        messages.append({"role": "user", "content": notice})


def _system(parts: PromptParts) -> str:
    if parts.native:
        return render("system_native", notices=parts.notices, overview=parts.overview)
    return render("system", manifest=parts.manifest, notices=parts.notices, overview=parts.overview)


def _rendered_observation(template: str, observation: str, is_error: bool) -> str:
    """An earlier step's observation as the model reads it. Every later step of the session sends
    it again, so the last OBSERVATIONS_KEPT renderings are kept (a lookup hashes the text once)."""
    key = (template, observation, is_error)
    return _observations.get_or_make(
        key, lambda: render(template, observation=observation, is_error=is_error)
    )


OBSERVATIONS_KEPT = 256
_observations: Recent[tuple[str, str, bool], str] = Recent(OBSERVATIONS_KEPT)


def _history_messages(item: HistoryItem, index: int, native: bool) -> list[Message]:
    if isinstance(item, Turn):
        return [{"role": item.role, "content": item.content}]
    if isinstance(item, FormatErrorStep):
        return [
            {"role": "assistant", "content": item.raw_output},
            {"role": "user", "content": item.format_error},
        ]
    return _native_step_messages(item, index) if native else _step_messages(item)


def _step_messages(step: CompletedStep) -> list[Message]:
    action = step.action_details.raw_action_string.strip()
    reply = f"Thought: {step.thought}\n{action}" if step.thought else action
    observation = _rendered_observation("observation", step.observation, step.is_error)
    return [{"role": "assistant", "content": reply}, {"role": "user", "content": observation}]


def _native_step_messages(step: CompletedStep, index: int) -> list[Message]:
    """The step as the provider's own tool-call turn; the id is the step's place in the history."""
    call_id = f"call_{index}"
    arguments = json.dumps(step.action_details.tool_args, ensure_ascii=False)
    call = {
        "id": call_id,
        "type": "function",
        "function": {"name": step.action_details.tool_name, "arguments": arguments},
    }
    result = _rendered_observation("tool_result", step.observation, step.is_error)
    # "" and never None: litellm drops a None content, and chat templates (llama.cpp's) read the key.
    return [
        {"role": "assistant", "content": step.thought, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": call_id, "content": result},
    ]
