"""Thin endpoints: validate the body, call one core function, return its result.

react_step walks a short corridor, each module entered once, in this order:

    bodies (measured, parsed, validated; its secrets remembered) ─► auth (the key covers the project)
    ─► step.prepare (one worker-thread hop: the project, the tools, the prompt) ─► step.call.step_reply
    (the model asked, its reply read by parsing, the outcome by step.interpret) ─► the last item as
    JSON, or every item as Server-Sent Events (step.stream)
"""

from pydantic import BaseModel
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import Scope

from reactstep.contract.actions import ExecuteActionRequest
from reactstep.contract.health import Health, Version
from reactstep.contract.step import ReactStepRequest, ReactStepResponse
from reactstep.service.http.auth import authorize_project
from reactstep.service.http.bodies import parse_model, read_model, received_body
from reactstep.service.http.event_stream import HEADERS, EventStreamResponse
from reactstep.service.http.readiness import check_readiness
from reactstep.service.metrics import CONTENT_TYPE
from reactstep.service.runtime import Runtime
from reactstep.service.step.call import step_reply
from reactstep.service.step.prepare import PreparedStep, prepare
from reactstep.service.step.prompt import describe_tools
from reactstep.service.step.stream import step_events
from reactstep.service.version import OPENAPI_PATH, api_version, commit, package_version
from reactstep.service.workspace.calls import execute_action as execute_action_call

JSON = "application/json"


def model_json(body: BaseModel, exclude_none: bool = False) -> bytes:
    """A model's JSON, as model_dump_json makes it, in bytes (pydantic in one pass, no dict between)."""
    return body.__pydantic_serializer__.to_json(body, exclude_none=exclude_none)


def json_response(body: bytes, status: int = 200) -> Response:
    """An answer with this JSON body (200 unless told)."""
    return Response(body, status_code=status, media_type=JSON)


def _runtime(request: Request) -> Runtime:
    runtime: Runtime = request.app.state.runtime
    return runtime


async def react_step(request: Request) -> Response:
    """POST /api/agent/react_step: a JSON body, or Server-Sent Events when the body asks to stream."""
    runtime = _runtime(request)
    body = await read_model(request, ReactStepRequest)
    authorize_project(request.scope, body.project_id)
    prepared = await prepare(
        body, runtime, request.scope["state"].get("key_limits")
    )  # every 4xx and 429 first
    if body.background:  # background_steps.py: 202 with the step's id, or its resumable events
        state = request.scope["state"]
        return await request.app.state.background_steps.start(  # type: ignore[no-any-return]
            state["owner"], body.project_id, prepared, runtime.llm, body.stream
        )
    replies = step_reply(prepared, runtime.llm, streamed=body.stream)
    if body.stream:
        plain_answer = isinstance(prepared, PreparedStep) and prepared.context.plain_answer
        return EventStreamResponse(step_events(replies, plain_answer), headers=HEADERS)
    *_, response = [item async for item in replies]  # no delta when not streamed: the response alone
    assert isinstance(response, ReactStepResponse)
    return Response(model_json(response, exclude_none=True), media_type=JSON)


async def execute_action(request: Request) -> Response:
    """POST /api/agent/execute_action (direct.py answers it too, for requests no layer reroutes)."""
    answer = await answer_execute_action(request.scope, received_body(request.scope), _runtime(request))
    return json_response(answer)


async def answer_execute_action(scope: Scope, raw: bytes, runtime: Runtime) -> bytes:
    """execute_action's answer to a raw body: the JSON of a 200, or a ServiceError."""
    body = await parse_model(raw, ExecuteActionRequest)
    authorize_project(scope, body.project_id)
    return model_json(await execute_action_call(body, runtime))


async def list_tools(request: Request) -> JSONResponse:
    """GET /api/agent/tools."""
    return JSONResponse(describe_tools(_runtime(request).registry))


async def healthz(request: Request) -> Response:
    """GET /healthz: the process is up."""
    return json_response(model_json(Health(status="ok")))


async def readyz(request: Request) -> Response:
    """GET /readyz: every back-end answers."""
    report = await run_in_threadpool(check_readiness, _runtime(request))
    return json_response(model_json(report), 200 if report.status == "ready" else 503)


async def server_version(request: Request) -> Response:
    """GET /version: package, commit, API and default embedding model."""
    version = Version(
        version=package_version(),
        commit=commit(),
        api_version=api_version(),
        embedding_model=_runtime(request).settings.embedding_model,
    )
    return json_response(model_json(version))


async def metrics(request: Request) -> Response:
    """GET /metrics: this process's counters and histograms, in Prometheus' text format."""
    return Response(_runtime(request).metrics.exposition(), headers={"content-type": CONTENT_TYPE})


async def openapi_spec(request: Request) -> Response:
    """GET /openapi.yaml: the contract this app implements."""
    return Response(OPENAPI_PATH.read_bytes(), media_type="application/yaml")
