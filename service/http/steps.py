"""Background steps over HTTP (background_steps.py does the work): react_step's `background`,
GET and DELETE /api/agent/steps/{step_id}, and GET /api/agent/steps/{step_id}/events."""

import re

from starlette.requests import Request
from starlette.responses import Response

from reactstep.contract.step import ReactStepRequest, ReactStepResponse
from reactstep.service.errors import BadRequest
from reactstep.service.http.auth import authorize_project, key_owner
from reactstep.service.http.background_steps import BackgroundSteps
from reactstep.service.http.step_records import StepId, parse_step_id
from reactstep.service.llm.protocol import LLMGateway
from reactstep.service.step.prepare import PreparedStep

EVENT_ID = re.compile(r"[0-9]{1,9}")


def _steps(request: Request) -> BackgroundSteps:
    steps: BackgroundSteps = request.app.state.background_steps
    return steps


def _step(request: Request) -> StepId:
    """The step the URL names, if the key may use its project."""
    step = parse_step_id(request.path_params["step_id"])
    authorize_project(request.scope, step.project_id)
    return step


async def start_background(
    request: Request, body: ReactStepRequest, prepared: PreparedStep | ReactStepResponse, llm: LLMGateway
) -> Response:
    """react_step with `background: true`: 202 with the step's id, or its events when it streams; `llm`
    is the gateway the key's budget admitted (budgets/spending.py)."""
    owner = key_owner(request.scope)
    return await _steps(request).start(owner, body.project_id, prepared, llm, body.stream)


async def get_step(request: Request) -> Response:
    """GET /api/agent/steps/{step_id}: the step's answer, or 202 while it runs."""
    return await _steps(request).answer(_step(request), key_owner(request.scope))


async def get_step_events(request: Request) -> Response:
    """GET /api/agent/steps/{step_id}/events: the events after Last-Event-ID (all without one)."""
    step = _step(request)
    return await _steps(request).events(step, key_owner(request.scope), _last_event_id(request))


async def delete_step(request: Request) -> Response:
    """DELETE /api/agent/steps/{step_id}: stop the step (when it runs here) and forget it."""
    await _steps(request).cancel(_step(request), key_owner(request.scope))
    return Response(status_code=204)


def _last_event_id(request: Request) -> int:
    sent = request.headers.get("last-event-id")
    if sent is None or sent == "":
        return -1
    if EVENT_ID.fullmatch(sent) is None:
        raise BadRequest("Last-Event-ID must be the id of an event this step sent (a whole number)")
    return int(sent)
