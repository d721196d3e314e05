"""Each route of the server as one operation (calls.py): the request built, the answer parsed.

Which requests are SAFE to send again and which are WRITEs is decided here, per route (retries.py).
"""

import json
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any, TypeVar

import httpx
from pydantic import BaseModel, SecretStr, ValidationError
from pydantic_core import to_jsonable_python

from reactstep.client.api.calls import Call, Invoke, Op, file_path, project_path
from reactstep.client.api.errors import BadResponse, NotFound
from reactstep.client.api.retries import Safety
from reactstep.client.api.wire import (
    Changes,
    ExecuteActionResponse,
    IndexProgress,
    IndexResult,
    ProjectReport,
    ReactStepResponse,
    StoredFile,
    SyncPlan,
)

M = TypeVar("M", bound=BaseModel)
NEW_FILE = "new"  # upload's if_match for a file that must not exist yet (If-None-Match: *)
REACT_STEP = "/api/agent/react_step"
EXECUTE_ACTION = "/api/agent/execute_action"
ProgressSink = Callable[[IndexProgress], Any]


def body_of(request: BaseModel | Mapping[str, Any]) -> dict[str, Any]:
    """A request body from a model (as the wire has it, lent keys revealed) or a mapping (as given)."""
    if isinstance(request, BaseModel):
        body: dict[str, Any] = to_jsonable_python(_revealed(request.model_dump(exclude_none=True)))
        return body
    return dict(request)


def _revealed(value: Any) -> Any:
    """The value with each SecretStr as its text: a key the client lends must reach the server."""
    if isinstance(value, SecretStr):
        return value.get_secret_value()
    if isinstance(value, dict):
        return {key: _revealed(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_revealed(item) for item in value]
    return value


def parsed(model: type[M], content: bytes | dict[str, Any]) -> M:
    """An answer as its model; BadResponse when it is not what the contract says."""
    try:
        if isinstance(content, dict):
            return model.model_validate(content)
        return model.model_validate_json(content)
    except ValidationError as exc:
        raise BadResponse(f"the server's answer is no {model.__name__}: {exc}") from exc


def step(request: BaseModel | Mapping[str, Any]) -> Op[ReactStepResponse]:
    """POST react_step: one reasoning step (SAFE: a step changes nothing but the LLM bill)."""
    body = body_of(request)
    body.pop("stream", None)
    response: httpx.Response = yield Call("POST", REACT_STEP, Safety.SAFE, json=body)
    return parsed(ReactStepResponse, response.content)


def streamed_step(
    request: BaseModel | Mapping[str, Any], on_event: Callable[[str, dict[str, Any]], Any]
) -> Op[ReactStepResponse]:
    """POST react_step as an event stream: thought deltas to on_event, the `result` returned."""
    result = yield replace(stream_call(request), on_event=on_event)
    return parsed(ReactStepResponse, result)


def stream_call(request: BaseModel | Mapping[str, Any]) -> Call:
    """The call of a streamed step, for a client that hands each event to its caller: a background
    step, so that a dropped connection is resumed (resumption.py) instead of paying for the step again."""
    body = {**body_of(request), "stream": True, "background": True}
    return Call("POST", REACT_STEP, Safety.SAFE, json=body)


def execute(request: BaseModel | Mapping[str, Any]) -> Op[ExecuteActionResponse]:
    """POST execute_action: one tool call. A server tool writes only with an approval_token (without
    one a write tool previews its diff), so the call is a WRITE with a token and SAFE without."""
    body = body_of(request)
    safety = Safety.WRITE if body.get("approval_token") else Safety.SAFE
    response: httpx.Response = yield Call("POST", EXECUTE_ACTION, safety, json=body)
    return parsed(ExecuteActionResponse, response.content)


def create_project(project_id: str) -> Op[ProjectReport]:
    """PUT the project (idempotent: SAFE)."""
    response: httpx.Response = yield Call("PUT", project_path(project_id), Safety.SAFE)
    return parsed(ProjectReport, response.content)


def describe_project(project_id: str) -> Op[ProjectReport]:
    """GET the project: files, versions, index state, incarnation."""
    response: httpx.Response = yield Call("GET", project_path(project_id), Safety.SAFE)
    return parsed(ProjectReport, response.content)


def plan_sync(project_id: str, body: Mapping[str, Any]) -> Op[SyncPlan]:
    """POST .../sync with a manifest (SAFE: it states the files wanted; sent twice, the same state)."""
    call = Call("POST", project_path(project_id, "/sync"), Safety.SAFE, json=dict(body))
    response: httpx.Response = yield call
    return parsed(SyncPlan, response.content)


def upload(project_id: str, path: str, data: bytes, if_match: str | None = None) -> Op[StoredFile]:
    """PUT one file; if_match: its expected ETag, NEW_FILE (it must not exist) or None (any bytes).
    A WRITE: the bytes may be stored before a failure, so it is sent again only when refused."""
    headers = {}
    if if_match == NEW_FILE:
        headers["if-none-match"] = "*"
    elif if_match is not None:
        headers["if-match"] = f'"{if_match}"'
    call = Call("PUT", file_path(project_id, path), Safety.WRITE, content=data, headers=headers)
    response: httpx.Response = yield call
    return parsed(StoredFile, response.content)


def download(project_id: str, path: str) -> Op[tuple[bytes, str] | None]:
    """GET one file: its bytes and ETag (unquoted); None when the project has no such file."""
    try:
        response: httpx.Response = yield Call("GET", file_path(project_id, path), Safety.SAFE)
    except NotFound as exc:
        if exc.code == "file_not_found":
            return None
        raise
    return response.content, response.headers.get("etag", "").strip('"')


def delete_file(project_id: str, path: str) -> Op[None]:
    """DELETE one file (SAFE: a file already gone is no error)."""
    try:
        yield Call("DELETE", file_path(project_id, path), Safety.SAFE)
    except NotFound as exc:
        if exc.code != "file_not_found":
            raise


def changes(project_id: str, since: int = 0) -> Op[Changes]:
    """The project's version and every change after `since`, the feed's pages followed."""
    collected: list[dict[str, Any]] = []
    while True:
        call = Call("GET", project_path(project_id, "/changes"), Safety.SAFE, params={"since": since})
        response: httpx.Response = yield call
        page = _json_object(response.content)
        collected.extend(page["changes"])
        if not page["changes"] or page["changes"][-1]["version"] >= page["version"]:
            return parsed(Changes, {"version": page["version"], "changes": collected})
        since = page["changes"][-1]["version"]


def index(project_id: str, on_progress: ProgressSink | None = None) -> Op[IndexResult]:
    """POST .../index with its progress streamed (SAFE: it brings the index in line with the files)."""

    def on_event(name: str, data: dict[str, Any]) -> Any:
        if name == "progress" and on_progress is not None:
            return on_progress(parsed(IndexProgress, data))
        return None

    call = Call(
        "POST", project_path(project_id, "/index"), Safety.SAFE, json={"stream": True}, on_event=on_event
    )
    result = yield call
    return parsed(IndexResult, result)


def invoke(function: Callable[..., Any], *args: Any) -> Op[Any]:
    """The user's callback called (and awaited, by the async client, when it is async)."""
    value = yield Invoke(function, args)
    return value


def _json_object(content: bytes) -> dict[str, Any]:
    try:
        value = json.loads(content)
    except ValueError:
        value = None
    if not isinstance(value, dict):
        raise BadResponse(f"the server answered with no JSON object: {content[:200]!r}")
    return value
