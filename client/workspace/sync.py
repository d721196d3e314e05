"""`reactstep sync` and `index`: make a server project hold exactly a folder's files, over the sync protocol.

GET the project (404: PUT it) ─► the state to start from (client/workspace/sync_state.py: this server's
    incarnation of the project, else fresh, said; or StaleState when that could lose files)
scan DIR ─► POST .../sync {files, base_version}
    conflicts (a tool on the server changed a path since the last sync, and the folder holds other
    bytes) ─► SyncRefused naming them, nothing changed; with force, the folder's bytes win; with
    keep_both, the server's bytes are kept in the folder as name.conflict-<version>.ext
    (client/workspace/keep_both.py) and the folder's win at the path, so both are on both sides
    upload ─► PUT each file, If-Match its ETag (412: it changed meanwhile ─► run again)
    anything changed ─► POST .../sync again with apply_deletes (the server removes what DIR lacks)
        and the plan must now be empty
    index ─► POST .../index, progress streamed
    ─► the state (version, files) saved in DIR/.reactstep for the next sync and pull
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reactstep.client.api import operations
from reactstep.client.api.calls import Op
from reactstep.client.api.errors import ClientError, NotFound, PreconditionFailed
from reactstep.client.api.operations import NEW_FILE
from reactstep.client.api.wire import IndexProgress, wire_of
from reactstep.client.workspace.folder import Scan, SyncState, entry_of, save_state, scan
from reactstep.client.workspace.keep_both import KeptCopies, keep_servers_copies
from reactstep.client.workspace.sync_state import described, starting_state

Progress = Callable[[int, int, str], None]  # (done, total, latest path)


class SyncRefused(ClientError):
    """The server holds tool writes the folder has not seen; syncing would revert them."""

    def __init__(self, project_id: str, conflicts: list[dict[str, Any]], root: Path) -> None:
        listed = ", ".join(f"{item['path']} (version {item['version']})" for item in conflicts)
        super().__init__(
            f"refused: a tool on the server changed {len(conflicts)} file(s) of project {project_id!r} "
            f"since {root} last synced: {listed}; nothing was changed. Run `reactstep pull {root} "
            f"--project {project_id}` to bring them here first, pass --keep-both to keep the server's "
            "copies beside yours as name.conflict-<version>.ext, or --force to overwrite them"
        )
        self.paths = [item["path"] for item in conflicts]


@dataclass
class SyncReport:
    """What one sync did."""

    project_id: str
    version: int = 0  # the project's version after this sync (unless another client wrote meanwhile)
    uploaded: int = 0
    bytes_uploaded: int = 0
    unchanged: int = 0
    deleted: int = 0
    kept: int = 0  # files the server holds and the folder lacks, left there (no apply_deletes)
    overwritten: list[str] = field(default_factory=list)  # tool writes replaced by --force
    kept_both: list[str] = field(default_factory=list)  # the server's copies --keep-both kept here
    scan: Scan = field(default_factory=Scan)
    index: dict[str, Any] | None = None

    def summary(self) -> str:
        """The one line every sync prints."""
        deleted = f"deleted {self.deleted}" + (f", kept {self.kept} not in the folder" if self.kept else "")
        forced = f", overwrote {len(self.overwritten)} tool write(s)" if self.overwritten else ""
        if self.kept_both:
            forced = (
                f", kept the server's copy of {len(self.kept_both)} conflict(s): {', '.join(self.kept_both)}"
            )
        return (
            f"synced {self.project_id} at version {self.version}: uploaded {self.uploaded} files "
            f"({self.bytes_uploaded} bytes), {self.unchanged} unchanged, {deleted}{forced}; "
            f"{self.scan.skipped()}"
        )


@dataclass(frozen=True)
class SyncOptions:
    """How a sync treats the server's files."""

    force: bool = False  # the folder's bytes win over tool writes it has not seen
    keep_both: bool = False  # ...and the server's are kept in the folder as name.conflict-<version>.ext
    apply_deletes: bool = True  # remove the server's files the folder lacks
    index: bool = False  # bring the search index in line afterwards
    max_file_bytes: int = 1_000_000  # larger files stay out of the manifest


def sync_folder(
    project_id: str,
    root: Path,
    server: str,
    options: SyncOptions,
    uploading: Progress | None = None,
    indexing: Progress | None = None,
) -> Op[SyncReport]:
    """Make the project hold the folder's files; SyncRefused when that would revert a tool's write.
    `server` names the server in the folder's sync state (its URL, or "in-process")."""
    project = yield from described(project_id, create=True)
    state = starting_state(root, project_id, server, project, refuse_when_filled=not options.force)
    found = scan(root, options.max_file_bytes, state.files)
    report = SyncReport(project_id, scan=found)
    plan = yield from _plan(project_id, {"files": found.manifest, "base_version": state.version})
    if plan["conflicts"] and not (options.force or options.keep_both):
        raise SyncRefused(project_id, plan["conflicts"], root)
    forced = [item["path"] for item in plan["conflicts"]]
    kept = KeptCopies()
    if options.keep_both:
        kept = yield from keep_servers_copies(project_id, root, plan["conflicts"])
    report.kept_both = sorted(kept.copies)
    sending = [*plan["upload"], *(path for path in forced if path in found.files), *report.kept_both]
    for done, path in enumerate(sending, start=1):
        data = (root / path).read_bytes()
        found.files[path] = entry_of(root / path, data)  # what is sent, even if it changed since the scan
        yield from _upload(project_id, path, data, _if_match(path, plan, kept))
        report.uploaded += 1
        report.bytes_uploaded += len(data)
        if uploading is not None:
            yield from operations.invoke(uploading, done, len(sending), path)
    for path in forced:
        if path not in found.files and options.apply_deletes:
            yield from operations.delete_file(project_id, path)
    report.overwritten = [] if options.keep_both else forced
    report.unchanged = len(found.files) - report.uploaded
    if sending or (plan["delete"] and options.apply_deletes) or forced:
        base = plan["version"]
        body = {"files": found.manifest, "base_version": base, "apply_deletes": options.apply_deletes}
        plan = yield from _plan(project_id, body)
        if plan["conflicts"]:  # a tool wrote while this sync ran
            raise SyncRefused(project_id, plan["conflicts"], root)
        if plan["upload"]:
            raise ClientError(
                f"{', '.join(plan['upload'][:5])} changed on the server while this sync ran; run it again"
            )
    report.deleted = len(plan["deleted"])
    report.kept = len(plan["delete"])
    report.version = plan["version"] + report.deleted  # the base, then this sync's own deletes
    save_state(root, project_id, SyncState(state.server, plan["version"], dict(found.files), state.created))
    if options.index:
        report.index = wire_of((yield from operations.index(project_id, _index_progress(indexing))))
    return report


def _plan(project_id: str, body: dict[str, Any]) -> Op[dict[str, Any]]:
    """POST .../sync; a project the server does not know yet is created first."""
    try:
        return wire_of((yield from operations.plan_sync(project_id, body)))
    except NotFound as exc:
        if exc.code != "project_not_found":
            raise
    yield from operations.create_project(project_id)
    return wire_of((yield from operations.plan_sync(project_id, body)))


def _if_match(path: str, plan: dict[str, Any], kept: KeptCopies) -> str | None:
    """The ETag a PUT of path expects: the plan's, the kept conflict's, the conflict's with force, or new."""
    if path in kept.if_match:
        return kept.if_match[path]
    conflict = next((item for item in plan["conflicts"] if item["path"] == path), None)
    if conflict is not None:
        etag = conflict.get("etag")  # None (any ETag) from a server whose conflicts carry none
        return None if etag is None else str(etag)
    return plan["etags"].get(path) or NEW_FILE


def _upload(project_id: str, path: str, data: bytes, if_match: str | None) -> Op[None]:
    try:
        yield from operations.upload(project_id, path, data, if_match)
    except PreconditionFailed as exc:
        raise ClientError(
            f"{path} changed on the server while this sync ran; nothing more was sent; run it again"
        ) from exc


def _index_progress(progress: Progress | None) -> Callable[[IndexProgress], Any]:
    def on_progress(step: IndexProgress) -> Any:
        if progress is None:
            return None
        # chunks while embedding (where the time goes), files before
        unit = "chunks" if step.phase in ("embed", "write", "done") else "files"
        done, total = getattr(step, f"{unit}_done"), getattr(step, f"{unit}_total")
        return progress(done, total, step.path or step.phase)

    return on_progress
