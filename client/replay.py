"""Replay a trace: the recorded model replies served back, the same loop run, each call compared.

Replay starts a scripted LLM on loopback that answers each step from the recording (the `raw_output`
to a text-mode request, the action as a native tool call to a native one, so a trace replays in
either tool-calling mode), drives the same loop (client tools run again; approvals are decided as
recorded, nobody is asked; each step's history fitted as the recording's prompt_fit says, not counted
for the scripted model's window), and stops at the first step that differs from the recording:

strict (format 2, same tool-calling mode) ─► the step's llm_request hashes, part by part (the model
    is not compared: replay's is the scripted one) ─► manifest | sampling | system prompt | message N,
    each with a unified diff of the rendered text
then ─► the step's answer (status, thought, action, final answer, format error), or its error code
    when the recorded run ended in an error (step_error: the scripted LLM answers with the fault
    that gives that code again; a match reports ok with that code as the status)
    ─► each server or client tool's observation (timings, ids and approval tokens never count)
live (from_step N) ─► steps 1..N compared as above, then the loop goes on with the replayed llm config
    (the recording's sampling, reply format and tool-calling mode) and the `live` model; the Report
    says which mode the live steps ran in
A step the replay met an error at (the recording had none, or another) is named with its status, code
and message, and what to do when the cause is replay's own (its scripted LLM refused by the server).
The comparing is traces/comparison.py's; the Report (report.py) says where it left the recording
(ok, diverged_at, part, diffs).
"""

from typing import Any

from reactstep.client.agent.loop import Approver, LocalSide, Question, RunResult, ToolRunner, refuse, run_loop
from reactstep.client.api.errors import ApiError
from reactstep.client.library import Client
from reactstep.client.traces.comparison import Comparer, Diverged
from reactstep.client.traces.format import TRACE_VERSION
from reactstep.client.traces.report import Report
from reactstep.client.traces.scripted_llm import Fault, Recorded, ScriptedLLMServer, ScriptItem

# What to do when the server refuses replay's own requests, by the error's code
REMEDIES = {
    "api_base_not_allowed": "it must let a request name replay's scripted LLM on this machine ({llm}): "
    "set REACTSTEP_LLM_API_BASE_ALLOWLIST='[\"http://127.0.0.1:*\"]' where it runs, or replay without "
    "--server and REACTSTEP_SERVER (a server in this process allows it)",
    "provider_not_allowed": "replay's scripted LLM is an OpenAI-compatible model (openai/replay): it must "
    "allow the provider `openai` (REACTSTEP_LLM_ALLOWED_PROVIDERS)",
    "unauthorized": "set REACTSTEP_CLIENT_API_KEY to a service key of that server",
}
# The LLM error codes a scripted fault reproduces: the HTTP status the server's provider call meets
FAULT_STATUS = {
    "llm_timeout": 408,
    "llm_unavailable": 503,
    "llm_rate_limited": 429,
    "llm_auth_failed": 401,
    "llm_bad_response": 400,
}


def recorded_replies(records: list[dict[str, Any]], steps: int | None = None) -> list[ScriptItem]:
    """The model replies of the recording, in order, as the steps that answered them (the first
    `steps` of them when given); a run that ended in an LLM error ends with the fault that causes
    it again (sticky: the server's retries meet it too; Retry-After 0, so they do not wait)."""
    replies: list[ScriptItem] = []
    for record in records:
        if _answered(record):
            replies.append(Recorded(record["response"]))
        elif record["kind"] == "step_error" and record["response"].get("code") in FAULT_STATUS:
            status = FAULT_STATUS[record["response"]["code"]]
            message = str(record["response"].get("message") or "recorded fault")
            replies.append(Fault(status, message=message, retry_after="0", sticky=True))
    return replies if steps is None else replies[:steps]


def recorded_fits(records: list[dict[str, Any]], steps: int | None = None) -> dict[int, dict[str, int]]:
    """How each recorded step's prompt was fitted, by step (0 first; the first `steps` when given):
    pinned, the replayed step asks the recorded prompt whatever the replayed model's window and
    tokenizer (replay's scripted model has others)."""
    answers = [record["response"] for record in records if record["kind"] in ("react_step", "step_error")]
    fits = {
        step: {"elided": fit["elided"], "left_out": fit["left_out"]}
        for step, answer in enumerate(answers)
        if isinstance(fit := answer.get("prompt_fit"), dict)
    }
    return fits if steps is None else {step: fit for step, fit in fits.items() if step < steps}


def replay(
    records: list[dict[str, Any]],
    server_url: str,
    llm: ScriptedLLMServer,
    tool_calling: str | None = None,
    stream: bool = False,
    run_tool: ToolRunner | None = None,
    api_key: str | None = None,
    *,
    from_step: int | None = None,
    live: dict[str, Any] | None = None,
    llm_overrides: dict[str, Any] | None = None,
    client_tools: list[dict[str, Any]] | None = None,
    approve: Approver = refuse,
) -> Report:
    """Re-run the recorded loop against a server and say where it left the recording.

    from_step with live: the first `from_step` steps are compared, then `live` (an llm config; {} is
    the server's default LLM) answers the rest, approvals decided by `approve`. llm_overrides
    change the replayed llm config (sampling); client_tools replace the recorded declarations.
    """
    header = records[0]
    recorded_mode = _first_recorded(records, "tool_calling")
    llm_config = {k: v for k, v in header.get("llm_config", {}).items() if k not in ("model", "api_base")}
    llm_config.update(llm_overrides or {}, model="openai/replay", api_base=llm.base_url)
    if tool_calling or recorded_mode:
        llm_config["tool_calling"] = tool_calling or recorded_mode
    # How the recorded native steps sent the earlier steps (as text to a chat format that drops tool
    # messages): replay's scripted model is not known to drop them, so it is told.
    if (results := _first_recorded(records, "tool_results")) and "tool_results" not in llm_config:
        llm_config["tool_results"] = results
    question = Question(
        project_id=header["project_id"],
        session_id=header["session_id"],
        user_query=header["user_query"],
        max_iterations=header["max_iterations"],
        earlier=header.get("earlier", []),
        llm_config=llm_config,
        stream=stream,
        client_tools=header.get("client_tools", []) if client_tools is None else client_tools,
        include_llm_request=True,
        prompt_fits=recorded_fits(records, from_step if live is not None else None),
    )
    report = Report(ok=False, format=int(header.get("version", TRACE_VERSION)), steps=0)
    strict = _strictness(header, recorded_mode, llm_config.get("tool_calling"), report.notes)
    comparer = Comparer(records[1:], strict, question, from_step if live is not None else None, live)
    if live is not None and from_step == 0:
        question.llm_config = comparer.live_config()  # no step is replayed: the live LLM answers the first
    local = LocalSide(run_tool, approve=comparer.decision(approve), listeners=[comparer])
    try:
        with Client(server_url, api_key) as client:
            outcome: RunResult = client.do(run_loop(question, local))
        comparer.finished(outcome.steps)
    except ApiError as error:
        if comparer.ended_in is None:
            raise  # an error the recording was not compared against (past --from-step, live)
        comparer.finished(comparer.step)
        report.ok, report.steps, report.status = True, comparer.step, error.code
        return report
    except Diverged as diverged:
        report.steps = comparer.step
        report.diverged_at, report.part, report.message = diverged.step, diverged.part, diverged.message
        report.diffs = diverged.diffs
        if (remedy := REMEDIES.get(comparer.replayed_error or "")) is not None:
            report.notes.append(
                f"the server at {server_url} refused replay's own request: {remedy.format(llm=llm.base_url)}"
            )
        return report
    report.ok, report.steps, report.status = True, outcome.steps, outcome.status
    report.live_from, report.live_tool_calling = comparer.live_from, comparer.live_mode()
    return report


def _answered(record: dict[str, Any]) -> bool:
    return record["kind"] == "react_step" and "raw_output" in record["response"]


def _first_recorded(records: list[dict[str, Any]], key: str) -> str | None:
    """The first value the recorded answers give for `key` (tool_calling, tool_results), if any."""
    values = (r["response"].get(key) for r in records if _answered(r))
    return next((value for value in values if value), None)


def _strictness(header: dict[str, Any], recorded: str | None, replayed: str | None, notes: list[str]) -> bool:
    """Whether the LLM requests' hashes are compared (said once in the notes when they are not)."""
    if header.get("version", 1) < 2:
        notes.append(
            f"recorded with trace format {header.get('version', 1)}: the LLM requests are not compared"
        )
        return False
    if recorded and replayed and recorded != replayed:
        notes.append(
            f"recorded in {recorded} mode, replayed in {replayed}: the LLM requests are not compared"
        )
        return False
    return True
