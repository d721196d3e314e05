"""Thin endpoints: validate the body, call one core function, return its result."""

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import Scope

from reactstep.contract.actions import ExecuteActionRequest
from reactstep.contract.health import Health, Version
from reactstep.contract.step import ReactStepRequest
from reactstep.service.budgets.spending import admit
from reactstep.service.http.auth import authorize_project
from reactstep.service.http.bodies import (
    json_response,
    model_json,
    model_response,
    parse_model,
    read_model,
    received_body,
)
from reactstep.service.http.readiness import check_readiness
from reactstep.service.metrics import CONTENT_TYPE
from reactstep.service.runtime import Runtime
from reactstep.service.schemas import check_client_tools
from reactstep.service.step.call import take_step
from reactstep.service.step.prepare import prepare
from reactstep.service.step.prompt import describe_tools
from reactstep.service.step.stream import stream_step
from reactstep.service.version import OPENAPI_PATH, api_version, commit, package_version
from reactstep.service.workspace.calls import execute_action as execute_action_call


def _runtime(request: Request) -> Runtime:
    runtime: Runtime = request.app.state.runtime
    return runtime


async def react_step(request: Request) -> Response:
    """POST /api/agent/react_step: a JSON body, or Server-Sent Events when the body asks to stream."""
    runtime = _runtime(request)
    body = check_client_tools(await read_model(request, ReactStepRequest))
    authorize_project(request.scope, body.project_id)
    prepared = await prepare(body, runtime)  # the project's 404 and every request error, before any LLM call
    llm = await admit(request.scope, body, prepared, runtime)  # the key's limits: 429 before any LLM call
    if body.stream:
        return stream_step(prepared, llm)
    return model_response(await take_step(prepared, llm), exclude_none=True)


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
