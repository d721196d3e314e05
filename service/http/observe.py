"""The outermost middleware: every request gets an id, its route, one log line and its metrics.

    X-Request-ID (1-128 of A-Z a-z 0-9 _ . : -) or a new id ─► request context (logs.py)
    ─► the route, matched once (routing.match_route: every layer and the router read scope["route"])
    ─► the app (every layer may note fields; error bodies carry the id) ─► the answer, with
    X-Request-ID ─► metrics (route template, status, seconds) and one log line:
    {"message": "request", "method", "route", "status", "duration_ms", "project", "error", ...}

An exception nothing else handled becomes a 500 internal_error here, inside the request's context
(its traceback is logged with the request id), then goes on to the server as before.
Pure ASGI, no BaseHTTPMiddleware: it runs on every request, so it keeps to the least per request:
one context object and one closure, metric children looked up by a tuple, and the line written
without a LogRecord when our own handlers are the only ones (logs.log_line).
"""

import logging
import re
from collections.abc import Sequence
from time import perf_counter

from starlette.routing import BaseRoute
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from reactstep.service.errors import INTERNAL_ERROR, ServiceError, error_response
from reactstep.service.http.routing import match_route
from reactstep.service.logs.context import RequestContext, accept_request_id, begin, end
from reactstep.service.logs.writing import log_line
from reactstep.service.metrics import Metrics

logger = logging.getLogger("reactstep.http")
UNMATCHED = "unmatched"  # no route: the path itself would give the metrics unbounded labels
# Methods counted by name; a client may send any token as a method, and labels must stay a closed set.
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH"})


class ObserveMiddleware:
    """Request ids, the route's match, the request log line and the HTTP metrics."""

    def __init__(self, app: ASGIApp, metrics: Metrics, routes: Sequence[BaseRoute]) -> None:
        self.app = app
        self.metrics = metrics
        self.routes = routes
        self._templates: dict[str, str] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = perf_counter()
        match_route(scope, self.routes)
        context = RequestContext(accept_request_id(_header(scope, b"x-request-id")))
        id_header = (b"x-request-id", context.request_id.encode("ascii"))
        status = 0  # nothing sent yet

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                message["headers"] = [*message.get("headers", ()), id_header]
            await send(message)

        token = begin(context)
        try:
            await self.app(scope, receive, send_with_id)
        except Exception as exc:
            logger.error("unexpected error on %s %s", scope["method"], scope["path"], exc_info=exc)
            if not status:  # nothing sent yet: the client gets a code it can report
                await error_response(ServiceError(INTERNAL_ERROR))(scope, receive, send_with_id)
            raise
        finally:
            self._finish(scope, context, status or 500, perf_counter() - started)
            end(token)

    def _finish(self, scope: Scope, context: RequestContext, status: int, seconds: float) -> None:
        method = scope["method"] if scope["method"] in METHODS else "other"
        route = self._route(scope)
        self.metrics.http_request(method, route, status, seconds)
        if logger.isEnabledFor(logging.INFO):  # the line is built only when it is written
            fields = {
                "method": method,
                "route": route,
                "status": status,
                "duration_ms": round(seconds * 1000, 3),
            }
            if (project := scope.get("state", {}).get("project")) is not None:  # auth.authorize_project
                fields["project"] = project
            fields.update(context.fields)
            log_line(logger, logging.INFO, "request", context.request_id, fields)

    def _route(self, scope: Scope) -> str:
        """The matched route's template ('/api/projects/{project_id}/files/{path}'), or 'unmatched'."""
        path = getattr(scope.get("route"), "path", None)
        if path is None:
            return UNMATCHED
        template = self._templates.get(path)
        if template is None:
            template = self._templates[path] = re.sub(r"\{(\w+):\w+\}", r"{\1}", path)
        return template


def _header(scope: Scope, name: bytes) -> bytes | None:
    for key, value in scope["headers"]:
        if key == name:
            return value  # type: ignore[no-any-return]
    return None
