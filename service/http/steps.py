"""Background steps over HTTP (background_steps.py does the work): react_step's `background`,
GET and DELETE /api/agent/steps/{step_id}, and GET /api/agent/steps/{step_id}/events."""

import re

from starlette.requests import Request
from starlette.responses import Response

from reactstep.service.errors import BadRequest
from reactstep.service.http.auth import authorize_project
from reactstep.service.http.background_steps import BackgroundSteps
from reactstep.service.http.step_records import StepId, parse_step_id

EVENT_ID = re.compile(r"[0-9]{1,9}")


def _steps(request: Request) -> BackgroundSteps:
    steps: BackgroundSteps = request.app.state.background_steps
    return steps


def _owner(request: Request) -> str:
    """Who is calling, as auth.key_owner put it in the request's state: what a step is scoped to."""
    owner: str = request.scope["state"]["owner"]
    return owner


def _step(request: Request) -> StepId:
    """The step the URL names, if the key may use its project."""
    step = parse_step_id(request.path_params["step_id"])
    authorize_project(request.scope, step.project_id)
    return step


async def get_step(request: Request) -> Response:
    """GET /api/agent/steps/{step_id}: the step's answer, or 202 while it runs."""
    return await _steps(request).answer(_step(request), _owner(request))


async def get_step_events(request: Request) -> Response:
    """GET /api/agent/steps/{step_id}/events: the events after Last-Event-ID (all without one)."""
    step = _step(request)
    return await _steps(request).events(step, _owner(request), _last_event_id(request))


async def delete_step(request: Request) -> Response:
    """DELETE /api/agent/steps/{step_id}: stop the step (when it runs here) and forget it."""
    await _steps(request).cancel(_step(request), _owner(request))
    return Response(status_code=204)


def _last_event_id(request: Request) -> int:
    sent = request.headers.get("last-event-id")
    if sent is None or sent == "":
        return -1
    if EVENT_ID.fullmatch(sent) is None:
        raise BadRequest("Last-Event-ID must be the id of an event this step sent (a whole number)")
    return int(sent)
