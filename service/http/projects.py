"""Thin endpoints for a project's life over HTTP: the project, its files, sync, changes, indexing."""

import asyncio
import base64
import logging
import time
from collections.abc import AsyncIterator
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from reactstep.contract.indexing import IndexRequest
from reactstep.contract.sync import SyncRequest
from reactstep.service.errors import BadRequest, ServiceError, ValidationFailed
from reactstep.service.http.auth import authorize_project
from reactstep.service.http.bodies import read_model, received_body
from reactstep.service.http.content_digest import parse_content_digest
from reactstep.service.http.event_stream import HEADERS, EventStreamResponse
from reactstep.service.http.url_paths import url_file_path
from reactstep.service.runtime import Runtime
from reactstep.service.schemas import check_project_id
from reactstep.service.step.stream import error_event, event
from reactstep.service.workspace.files import Preconditions, delete_file, get_file, put_file
from reactstep.service.workspace.index_jobs import stop_index_run
from reactstep.service.workspace.indexing import describe_resuming, run_index, start_index_job
from reactstep.service.workspace.projects import create_project, delete_project, describe_project
from reactstep.service.workspace.sync import list_changes, run_sync
from reactstep.service.workspace.versions import collect, read_version
from reactstep.tools.index.progress import IndexProgress

logger = logging.getLogger("reactstep")
PROGRESS_EVENT_EVERY_S = 0.25
MAX_VERSION = 10**18 - 1  # a query parameter naming a version holds at most 18 digits (openapi.yaml says so)


def _runtime(request: Request) -> Runtime:
    runtime: Runtime = request.app.state.runtime
    return runtime


def _project(request: Request) -> str:
    """The authorised project id of the URL."""
    return authorize_project(request.scope, check_project_id(request.path_params["project_id"]))


async def put_project(request: Request) -> JSONResponse:
    """PUT /api/projects/{project_id}: create it (idempotent); 201 when new, 200 when it existed."""
    report, created = await run_in_threadpool(create_project, _project(request), _runtime(request))
    return JSONResponse(report.model_dump(mode="json"), status_code=201 if created else 200)


async def get_project(request: Request) -> JSONResponse:
    """GET /api/projects/{project_id}: files, chunks, versions and index state (an abandoned index
    run is started again)."""
    report = await run_in_threadpool(describe_resuming, _project(request), _runtime(request))
    return JSONResponse(report.model_dump(mode="json"))


async def remove_project(request: Request) -> Response:
    """DELETE /api/projects/{project_id}: files, index, symbols, overview and journal."""
    await run_in_threadpool(delete_project, _project(request), _runtime(request))
    return Response(status_code=204)


async def put_project_file(request: Request) -> JSONResponse:
    """PUT /api/projects/{project_id}/files/{path}: the raw body becomes the file, or nothing does."""
    project_id = _project(request)
    runtime = _runtime(request)
    when = _preconditions(request, with_body=True)
    data = received_body(request.scope)
    stored = await run_in_threadpool(put_file, project_id, url_file_path(request), data, when, runtime)
    return JSONResponse(stored.model_dump(mode="json"), headers={"etag": _quoted(stored.etag)})


async def get_project_file(request: Request) -> Response:
    """GET /api/projects/{project_id}/files/{path}: the raw bytes with their ETag (304 if unchanged);
    with ?version=N the bytes the path held at version N."""
    project_id = _project(request)
    version = _version_param(request, "version", default=None)
    if version is not None:
        return await _file_at_version(request, project_id, version)
    body = await run_in_threadpool(get_file, project_id, url_file_path(request), _runtime(request))
    headers = {"etag": _quoted(body.etag)}
    if body.etag in _etags(request.headers.get("if-none-match")):
        return Response(status_code=304, headers=headers)
    return Response(body.data, media_type="application/octet-stream", headers=headers)


async def _file_at_version(request: Request, project_id: str, version: int) -> Response:
    """The bytes of one version, with their ETag and their sha256 as Repr-Digest (RFC 9530)."""
    path = url_file_path(request)
    body = await run_in_threadpool(read_version, project_id, path, version, _runtime(request))
    digest = base64.b64encode(bytes.fromhex(body.sha256)).decode()
    headers = {"etag": _quoted(body.etag), "repr-digest": f"sha-256=:{digest}:"}
    return Response(body.data, media_type="application/octet-stream", headers=headers)


async def collect_project_garbage(request: Request) -> JSONResponse:
    """POST /api/projects/{project_id}/gc: delete the kept bytes no kept version needs any more."""
    result = await run_in_threadpool(collect, _project(request), _runtime(request))
    return JSONResponse(result.model_dump(mode="json"))


async def delete_project_file(request: Request) -> JSONResponse:
    """DELETE /api/projects/{project_id}/files/{path}."""
    project_id = _project(request)
    when = _preconditions(request)
    stored = await run_in_threadpool(delete_file, project_id, url_file_path(request), when, _runtime(request))
    return JSONResponse(stored.model_dump(mode="json"))


async def sync_project(request: Request) -> JSONResponse:
    """POST /api/projects/{project_id}/sync: the manifest in, what to upload, delete and fetch out."""
    project_id = _project(request)
    runtime = _runtime(request)
    body = await read_model(request, SyncRequest, path_keys="files")
    result = await run_in_threadpool(run_sync, project_id, body, runtime)
    return JSONResponse(result.model_dump(mode="json"))


async def project_changes(request: Request) -> JSONResponse:
    """GET /api/projects/{project_id}/changes?since=<version>."""
    project_id = _project(request)
    since = _version_param(request, "since", default=0)
    result = await run_in_threadpool(list_changes, project_id, since, _runtime(request))
    return JSONResponse(result.model_dump(mode="json"))


async def index_project(request: Request) -> Response:
    """POST /api/projects/{project_id}/index: wait for the run, start it (202), or stream its progress."""
    project_id = _project(request)
    runtime = _runtime(request)
    body = await read_model(request, IndexRequest, allow_empty=True)
    if body.stream:
        await run_in_threadpool(describe_project, project_id, runtime)  # 404 now, not as an event
        return EventStreamResponse(_index_events(project_id, body, runtime), headers=HEADERS)
    if body.background:
        job = await run_in_threadpool(start_index_job, project_id, body, runtime)
        return JSONResponse({"project_id": project_id, "indexing": job}, status_code=202)
    result = await run_in_threadpool(run_index, project_id, body, runtime)
    return JSONResponse(result.model_dump(mode="json"))


async def stop_index(request: Request) -> JSONResponse:
    """DELETE /api/projects/{project_id}/index: stop the run; 200 once it ended, 202 while it stops."""
    status, body = await run_in_threadpool(stop_index_run, _project(request), _runtime(request))
    return JSONResponse(body.model_dump(mode="json"), status_code=status)


async def _index_events(project_id: str, body: IndexRequest, runtime: Runtime) -> AsyncIterator[bytes]:
    """`progress` events (every phase change and embedding window, other steps at most four a
    second, and the latest step again each second while nothing moves), then one `result` or `error`."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[tuple[bytes, bool]] = asyncio.Queue()  # an event, and whether it is the last
    last: list[Any] = [0.0, None]  # when the last event went, and its step

    def progress(step: IndexProgress) -> None:
        sent: IndexProgress | None = last[1]
        moved = sent is None or (step.phase, step.chunks_done) != (sent.phase, sent.chunks_done)
        if moved or time.monotonic() - last[0] >= PROGRESS_EVENT_EVERY_S:
            last[:] = [time.monotonic(), step]
            loop.call_soon_threadsafe(queue.put_nowait, (event("progress", step.fields()), False))

    async def run() -> None:
        try:
            result = await run_in_threadpool(run_index, project_id, body, runtime, progress)
            queue.put_nowait((event("result", result.model_dump(mode="json")), True))
        except ServiceError as exc:
            queue.put_nowait((error_event(exc), True))
        except Exception as exc:  # the traceback to the log; the client gets a code
            logger.error("index stream of %s failed", project_id, exc_info=exc)
            queue.put_nowait((error_event(ServiceError("see the server log")), True))

    task = asyncio.create_task(run())
    try:
        while True:
            sent, last_event = await queue.get()
            yield sent
            if last_event:
                return
    finally:
        if not task.done():
            task.cancel()  # the run itself finishes in its thread; only the waiting stops


def _preconditions(request: Request, *, with_body: bool = False) -> Preconditions:
    """If-Match / If-None-Match headers, the base_version query parameter and, for a request with
    a body, its Content-Digest header."""
    if_match = request.headers.get("if-match")
    digest = request.headers.get("content-digest") if with_body else None
    if_none_match = request.headers.get("if-none-match")
    if with_body and if_none_match is not None and if_none_match.strip() != "*":
        raise BadRequest("If-None-Match on a PUT takes only '*' (store only if the file does not exist)")
    return Preconditions(
        if_match=None if if_match is None else frozenset(_etags(if_match)),
        if_none_match="*" if (if_none_match or "").strip() == "*" else None,
        base_version=_version_param(request, "base_version", default=None),
        digests=parse_content_digest(digest),
    )


def _etags(header: str | None) -> set[str]:
    """The entity tags of an If-Match / If-None-Match header, without quotes or W/."""
    if header is None:
        return set()
    return {tag.strip().removeprefix("W/").strip('"') for tag in header.split(",") if tag.strip()}


def _version_param(request: Request, name: str, default: int | None) -> Any:
    raw = request.query_params.get(name)
    if raw is None:
        return default
    # ASCII digits only ('²'.isdigit() holds, and int() refuses it), at most MAX_VERSION.
    if not (raw.isascii() and raw.isdigit()) or len(raw.lstrip("0")) > len(str(MAX_VERSION)):
        raise ValidationFailed(f"{name} must be a version: an integer from 0 to {MAX_VERSION}")
    return int(raw)


def _quoted(etag: str | None) -> str:
    return f'"{etag}"' if etag else ""
