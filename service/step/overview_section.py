"""The project overview in the system prompt, when a react_step request asks for it.

include_project_overview ──► the stored overview (tools/index/overview.py), read off the event loop
    ──► cut at a line to OVERVIEW_MAX_CHARS (react_step.py) ──► prompts/project_overview.j2
not indexed ──► the section says no overview is available (not an error)
"""

from dataclasses import dataclass

from reactstep.contract.step import ReactStepRequest
from reactstep.service.step.prompting import render
from reactstep.service.worker_threads import on_worker
from reactstep.tools.index.overview import load_overview
from reactstep.tools.store.objects import ObjectStore


@dataclass(frozen=True)
class OverviewSection:
    """The rendered section and, when the overview had to be cut, a note saying so."""

    text: str
    note: str = ""


async def read_requested_overview(request: ReactStepRequest, store: ObjectStore) -> str | None:
    """The project's stored overview when the request asks for it; None when not asked or not indexed."""
    if not request.include_project_overview:
        return None
    return await on_worker(_read, store, request.project_id)


def _read(store: ObjectStore, project_id: str) -> str | None:
    return load_overview(store, project_id)


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
