"""The hot JSON routes, answered from the ASGI call itself: no exception layer, router, Request or
Response object between admission and the endpoint's core.

    POST /api/agent/execute_action ─► DirectRoutes ─► the body admission read ─► the core
        (endpoints.answer_execute_action) ─► 200 with its JSON, or the ServiceError's answer
    anything else, or a request under a root_path ─► Starlette's exception layer and router

What goes out is what Starlette would send, byte for byte: the same two headers in the same order,
and the error answers of app.py's handler (errors.error_response). The route is the one
ObserveMiddleware matched (scope["route"]). Any other exception goes up to ObserveMiddleware, as it
does from the router.
"""

from collections.abc import Awaitable, Callable, Sequence

from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from reactstep.service.errors import ServiceError, error_response
from reactstep.service.http.bodies import received_body
from reactstep.service.runtime import Runtime

# A route's core: the scope (its grant), the raw body and the runtime -> the JSON of its 200 answer.
Answer = Callable[[Scope, bytes, Runtime], Awaitable[bytes]]
JSON_TYPE = (b"content-type", b"application/json")


class DirectRoutes:
    """Answers the POST routes given, when they are the matched route; passes every other request on."""

    def __init__(self, app: ASGIApp, runtime: Runtime, answers: Sequence[tuple[Route, Answer]]) -> None:
        self.app = app
        self.runtime = runtime
        self._by_path = {route.path: answer for route, answer in answers}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = getattr(scope.get("route"), "path", None) if scope["type"] == "http" else None
        answer = self._by_path.get(path) if path is not None else None
        if answer is None or scope["method"] != "POST" or scope.get("root_path"):
            await self.app(scope, receive, send)
            return
        try:
            body = await answer(scope, received_body(scope), self.runtime)
        except ServiceError as error:
            await error_response(error)(scope, receive, send)
            return
        headers = [(b"content-length", str(len(body)).encode("latin-1")), JSON_TYPE]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": body})
