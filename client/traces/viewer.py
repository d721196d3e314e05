"""A trace as one self-contained HTML page (`reactstep view`): a timeline of the run's steps.

trace.jsonl ─► read_trace (tolerant: a torn last line or another trace version is a warning)
            ─► steps: one per react_step, with the calls that followed it (execute_action,
               client_action, approval), and one per step_error (a step answered with an error:
               its status, code and message, a card of its own) — only what the page shows (no
               conversation history, no approval tokens); the run's cost, summed (format.py)
report.json ─► Report (report.py), optional: the diverging step is marked
viewer_page.html ─► the page: the data embedded as JSON (`<` escaped, so no `</script>` can end it),
               a Content-Security-Policy of default-src 'none' with the page's own style and
               script allowed by hash: nothing is fetched when it is viewed.
"""

import base64
import hashlib
import html
import json
import re
from importlib.resources import files
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from reactstep.client.api.errors import ReactstepError
from reactstep.client.traces.format import READ_VERSIONS, CostSum, trace_cost
from reactstep.client.traces.report import Report

TEMPLATE = "viewer_page.html"
CALL_KINDS = ("execute_action", "client_action", "approval")
_INLINE = {
    "style": re.compile(r"<style>(.*?)</style>", re.S),
    "script": re.compile(r"<script>(.*?)</script>", re.S),
}


class NotViewable(ReactstepError):
    """The trace or the report cannot be read."""


def read_trace(path: Path) -> tuple[list[dict[str, Any]], list[str]]:
    """The records of a trace and what the reader had to pass over (warnings for the page)."""
    records: list[dict[str, Any]] = []
    warnings: list[str] = []
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            warnings.append(f"line {number} is not JSON (a run cut short?); it is left out")
            continue
        if isinstance(record, dict):
            records.append(record)
        else:
            warnings.append(f"line {number} is not a record; it is left out")
    if not records or records[0].get("kind") != "session":
        raise NotViewable(f"{path} is not a reactstep trace (no session line first)")
    if records[0].get("version") not in READ_VERSIONS:
        warnings.append(
            f"recorded with trace format {records[0].get('version')}, this viewer reads "
            f"{', '.join(map(str, READ_VERSIONS))}: some parts may be missing"
        )
    return records, warnings


def read_report(path: Path) -> Report:
    """A replay report (report.py), or NotViewable saying what is wrong with it."""
    try:
        return Report.model_validate_json(path.read_bytes())
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "the file"
        raise NotViewable(f"{path} is not a replay report: {where}: {first['msg']}") from exc


def steps_of(records: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """One entry per react_step or step_error (1-based `n`, as replay counts steps), a react_step
    holding the calls that belong to it (by their `step`, else the last step before them); and the
    texts the LLM was asked, each once, by their sha256."""
    steps: list[dict[str, Any]] = []
    texts: dict[str, str] = {}
    for record in records[1:]:
        kind = record.get("kind")
        response = record.get("response") or {}
        if kind == "react_step":
            steps.append(_step(len(steps) + 1, response, record.get("at_ms"), texts))
        elif kind == "step_error":
            failed = {"status": "step_error", "error": _error_line(response)}
            steps.append(_step(len(steps) + 1, failed, record.get("at_ms"), texts))
        elif steps:
            owner = record.get("step")
            step = steps[owner - 1] if isinstance(owner, int) and 1 <= owner <= len(steps) else steps[-1]
            step["calls"].append(_call(str(kind), record.get("request") or {}, response))
    return steps, texts


def _error_line(response: dict[str, Any]) -> str:
    """A step error as the page says it: `503 llm_unavailable: message`, and how a stream ended."""
    line = f"{response.get('status')} {response.get('code')}: {response.get('message')}"
    return line + (" (an error event ended the stream)" if response.get("stream") else "")


def _asked(llm_request: dict[str, Any], texts: dict[str, str]) -> list[dict[str, str]]:
    """The parts of what the LLM was asked, by name and hash; each part's text goes into `texts` once
    (a history message or an unchanged system prompt is embedded once, not at every step)."""
    rendered = llm_request.get("rendered") or {}
    for part, digest in (llm_request.get("parts") or {}).items():
        if digest not in texts and isinstance(rendered.get(part), str):
            texts[digest] = rendered[part]
    return [{"part": part, "sha256": digest} for part, digest in (llm_request.get("parts") or {}).items()]


def _step(number: int, response: dict[str, Any], at_ms: Any, texts: dict[str, str]) -> dict[str, Any]:
    action = response.get("action_details") or {}
    usage = response.get("usage") or {}
    timing = response.get("timing") or {}
    return {
        "n": number,
        "at_ms": at_ms,
        "status": response.get("status"),
        "thought": response.get("thought"),
        "tool": action.get("tool_name"),
        "executor": action.get("executor"),
        "args": action.get("tool_args"),
        "requires_approval": bool(action.get("requires_approval")),
        "final_answer": response.get("final_answer"),
        "error": response.get("format_error") or response.get("error"),
        "notes": response.get("notes") or [],
        "raw_output": response.get("raw_output"),
        "model": response.get("model"),
        "tokens": {
            "prompt": usage.get("prompt_tokens") or 0,
            "completion": usage.get("completion_tokens") or 0,
        },
        "cost_usd": usage.get("cost_usd"),
        "ms": {"llm": timing.get("llm_ms"), "step": timing.get("total_ms")},
        "asked": _asked(response.get("llm_request") or {}, texts),
        "calls": [],
    }


def _call(kind: str, request: dict[str, Any], response: dict[str, Any]) -> dict[str, Any]:
    if kind == "approval":
        return {"kind": kind, "tool": request.get("tool_name"), "approved": response.get("approved")}
    if kind not in CALL_KINDS:  # a kind this viewer does not know: shown as it was recorded
        return {"kind": kind, "observation": json.dumps(response, indent=2, sort_keys=True)}
    approval = response.get("approval") or {}
    return {
        "kind": kind,
        "tool": request.get("tool_name"),
        "observation": response.get("observation"),
        "is_error": bool(response.get("is_error")),
        "approved_call": "approval_token" in request,
        "needs_approval": bool(approval.get("required")),
        "ms": response.get("execution_time_ms"),
    }


def page_data(path: Path, report: Report | None = None) -> dict[str, Any]:
    """Everything the page shows, as the JSON it embeds."""
    records, warnings = read_trace(path)
    header = records[0]
    steps, texts = steps_of(records)
    if report is not None and report.diverged_at is not None and not 1 <= report.diverged_at <= len(steps):
        warnings.append(f"the report names step {report.diverged_at}; the trace has {len(steps)}")
    return {
        "source": path.name,
        "trace_version": header.get("version"),
        "project_id": header.get("project_id"),
        "project_version": header.get("project_version"),
        "session_id": header.get("session_id"),
        "query": header.get("user_query"),
        "model": next((step["model"] for step in steps if step["model"]), None),
        "reactstep_version": header.get("reactstep_version"),
        "steps": steps,
        "cost": _cost(trace_cost(records)),
        "texts": texts,
        "report": None if report is None else report.model_dump(exclude_unset=True),  # as the file said it
        "warnings": warnings,
    }


def _cost(total: CostSum) -> dict[str, Any]:
    """The run's cost as the page says it: US dollars (None: no step priced) and the steps unpriced."""
    return {"usd": total.total_usd(), "unpriced_steps": total.unpriced_steps}


def render(data: dict[str, Any]) -> str:
    """The page: the template with the data embedded and a CSP allowing only its own inline code."""
    template = files("reactstep.client.traces").joinpath(TEMPLATE).read_text(encoding="utf-8")
    hashes = {kind: _sha256(pattern, template) for kind, pattern in _INLINE.items()}
    policy = (
        f"default-src 'none'; style-src '{hashes['style']}'; script-src '{hashes['script']}'; "
        "base-uri 'none'; form-action 'none'"
    )
    title = f"reactstep trace: {data.get('query') or data['source']}"
    return _fill(
        template, {"csp": html.escape(policy), "title": html.escape(title), "data": embedded_json(data)}
    )


def embedded_json(data: Any) -> str:
    """JSON safe inside a <script> element: no `<`, `>` or `&` (so no `</script>` or `<!--`), ASCII only."""
    text = json.dumps(data, ensure_ascii=True, sort_keys=True)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def write_page(trace: Path, report: Path | None = None, out: Path | None = None) -> Path:
    """Write the page for a trace (next to it, as <trace>.html, unless `out` says where)."""
    data = page_data(trace, read_report(report) if report else None)
    target = out or trace.with_suffix(".html")
    target.write_text(render(data), encoding="utf-8")
    return target


def _sha256(pattern: re.Pattern[str], template: str) -> str:
    found = pattern.search(template)
    if found is None:
        raise RuntimeError(f"{TEMPLATE} has no {pattern.pattern}")
    return "sha256-" + base64.b64encode(hashlib.sha256(found.group(1).encode()).digest()).decode()


def _fill(template: str, values: dict[str, str]) -> str:
    """Each {{name}} once, filled in one pass (a value holding `{{...}}` is not filled again)."""

    def value(match: re.Match[str]) -> str:
        return values[match.group(1)]

    return re.sub(r"\{\{(\w+)\}\}", value, template)
