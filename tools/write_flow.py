"""The two phases every write tool shares: a preview with a signed token, then the approved write.

run_write(tool_name, args, path, plan, context)
  no approval_token -> read the file -> plan(text) -> diff -> preview Observation, nothing written
                       (approval: token over project, tool, arguments, the file's version, expiry)
  approval_token    -> verify the token (altered, or for another call -> error)
                    -> the file is not at the token's base version:
                         it holds the token's result -> "Already applied" (nothing written twice)
                         else                         -> StaleFile
                    -> expired -> error
                    -> plan(text) again: same base, same result -> put_if(base version) -> "Wrote ..."
The plan is the tool's own edit: the current text (None: no such file) to the new text. A file's
version is its store ETag (the content MD5 for everything reactstep writes).
"""

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from reactstep.tools.errors import StaleFile, ToolError
from reactstep.tools.registry import Observation, ToolContext
from reactstep.tools.store.paths import ProjectPath, file_path, twin_in
from reactstep.tools.writes.approval import ABSENT, Approvals, CallScope, Grant, PendingApproval
from reactstep.tools.writes.diffs import changed_lines, unified_diff

BINARY_SNIFF_BYTES = 8192


@dataclass(frozen=True)
class Change:
    """The new text of a file, and what to tell the user about it (e.g. '2 replacements')."""

    text: str
    summary: str = ""


Plan = Callable[[str, str | None], Change]  # (normalized path, current text or None) -> change


@dataclass(frozen=True)
class FileState:
    """A file as a write found it: its store version (ABSENT when missing) and its text."""

    version: str
    text: str | None


def run_write(
    tool_name: str, args: BaseModel, raw_path: str, plan: Plan, context: ToolContext
) -> Observation:
    """Preview the change `plan` makes to the file at `raw_path`, or write it when approved."""
    path = file_path(raw_path)
    approvals = context.approvals
    if approvals is None:
        raise ToolError("this server cannot approve writes")  # a ToolContext built without Approvals
    # The path as normalized, so "./src/app.py" and "src/app.py" are one call.
    canonical: dict[str, Any] = {**args.model_dump(mode="json"), "path": path}
    scope = CallScope(context.project_id, tool_name, canonical)
    if context.approval_token is None:
        return _preview(path, plan, context, approvals, scope)
    grant = approvals.verify(context.approval_token, scope)
    return _apply(path, plan, context, approvals, grant)


def read_state(context: ToolContext, path: ProjectPath) -> FileState:
    """The file's version and text; a folder, a binary or an oversized file is refused."""
    store, project_id = context.store, context.project_id
    info = store.head(project_id, path)
    if info is None:
        if next(iter(store.list(project_id, path)), None) is not None:
            raise ToolError(f"{path} is a folder, not a file; name a file inside it")
        return FileState(ABSENT, None)
    limit = context.limits.file_max_bytes
    if info.size > limit:
        raise ToolError(f"{path} is {info.size} bytes; the write tools change files up to {limit} bytes")
    # Read after the HEAD: if the file changes in between, the token names the older version, so the
    # approval is refused as stale rather than written over content the user never saw.
    data = store.get(project_id, path)
    try:
        if b"\x00" in data[:BINARY_SNIFF_BYTES]:
            raise ValueError("NUL byte")
        return FileState(info.etag, data.decode("utf-8"))
    except ValueError as exc:  # UnicodeDecodeError is one
        raise ToolError(f"{path} is not a UTF-8 text file; the write tools change text files only") from exc


def _preview(
    path: ProjectPath, plan: Plan, context: ToolContext, approvals: Approvals, scope: CallScope
) -> Observation:
    """Nothing is written: the diff, and a token the user's approval turns into the write."""
    state = read_state(context, path)
    if state.version == ABSENT:
        _refuse_twin(path, context)
    change = plan(path, state.text)
    data = _encoded(path, change.text, context.limits.file_max_bytes)
    if change.text == state.text:
        return Observation(f"No change: {path} already has this content, so there is nothing to write.")
    token, grant = approvals.issue(scope, state.version, _md5(data))
    diff = unified_diff(path, state.text, change.text)
    text = (
        f"Nothing was written yet. The user must approve this change to {path} "
        f"({_describe(state.text, change)}) before it is written:\n{diff.rstrip()}"
    )
    return Observation(text, approval=PendingApproval(token, diff, grant.expires_at))


def _apply(
    path: ProjectPath, plan: Plan, context: ToolContext, approvals: Approvals, grant: Grant
) -> Observation:
    """Write the approved change, once, and only over the version the preview saw."""
    state = read_state(context, path)
    if state.version != grant.base_version:
        if _holds_result(state, grant):
            return _already_applied(path)
        raise StaleFile(path)
    approvals.check_unexpired(grant)
    change = plan(path, state.text)
    data = change.text.encode("utf-8")
    if _md5(data) != grant.result_version:
        raise StaleFile(path)  # the same base gives the same result; anything else is a changed file
    expected = None if grant.base_version == ABSENT else grant.base_version
    if expected is None:
        _refuse_twin(path, context)
    try:
        context.store.put_if(context.project_id, path, data, expected)
    except StaleFile:
        # The same approval racing in on another replica, or a retried request whose first attempt
        # wrote: the change is there all the same.
        if _holds_result(read_state(context, path), grant):
            return _already_applied(path)
        raise
    added, removed = changed_lines(state.text, change.text)
    return Observation(f"Wrote {path} (+{added} -{removed} lines).")


def _refuse_twin(path: str, context: ToolContext) -> None:
    """A new file may not differ from an existing one only by case or Unicode normalisation: one
    file on a case-insensitive disk (the project lists once per new file a tool writes)."""
    existing = twin_in(path, (info.path for info in context.store.list(context.project_id)))
    if existing is not None:
        raise ToolError(
            f"{path} differs from the existing {existing} only by case or Unicode normalisation, "
            f"so nothing was written; change {existing} instead"
        )


def _holds_result(state: FileState, grant: Grant) -> bool:
    """Whether the file already holds the approved change's result."""
    return state.text is not None and _md5(state.text.encode("utf-8")) == grant.result_version


def _already_applied(path: str) -> Observation:
    return Observation(f"Already applied: {path} is unchanged since this change was written.")


def _describe(before: str | None, change: Change) -> str:
    added, removed = changed_lines(before, change.text)
    counts = f"+{added} -{removed} lines"
    return f"{counts}, {change.summary}" if change.summary else counts


def _encoded(path: str, text: str, limit: int) -> bytes:
    data = text.encode("utf-8")
    if len(data) > limit:
        raise ToolError(f"the new content of {path} would be {len(data)} bytes; the limit is {limit} bytes")
    return data


def _md5(data: bytes) -> str:
    return hashlib.md5(data).hexdigest()
