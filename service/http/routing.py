"""A request matched once against the route table (app.ROUTES), and dispatched on that match.

ObserveMiddleware ─► match_route: scope["route"] (the route, or the first one on the path when
  the method is not its own: 405), its path params ─► labels, log line (observe.py)
  ─► auth ─► admission (the route's body limit) ─► MatchedRouter: the matched route's handler
no route on the path ─► MatchedRouter: a redirect to the path with(out) its trailing slash if
  that one has a route, else 404 (Starlette's router, from its table)
"""

from collections.abc import Sequence

from starlette.routing import BaseRoute, Match, Router
from starlette.types import Receive, Scope, Send


def match_route(scope: Scope, routes: Sequence[BaseRoute]) -> BaseRoute | None:
    """The route the request reaches, noted in its scope as Starlette's router would note it."""
    partial: BaseRoute | None = None
    partial_scope: Scope = {}
    for route in routes:
        match, child_scope = route.matches(scope)
        if match is Match.FULL:
            partial, partial_scope = route, child_scope
            break
        if match is Match.PARTIAL and partial is None:
            partial, partial_scope = route, child_scope
    if partial is not None:
        scope["route"] = partial
        scope.update(partial_scope)
    return partial


def allowed_methods(route: BaseRoute, routes: Sequence[BaseRoute]) -> list[str]:
    """Every method some route answers on the matched route's path (one route per method and path)."""
    path = getattr(route, "path", None)
    return sorted(
        {method for other in routes if getattr(other, "path", None) == path for method in _methods(other)}
    )


def _methods(route: BaseRoute) -> set[str]:
    return set(getattr(route, "methods", None) or ())


class MatchedRouter(Router):
    """Starlette's router, handing a request to the route match_route found instead of matching again."""

    async def app(self, scope: Scope, receive: Receive, send: Send) -> None:
        route: BaseRoute | None = scope.get("route")
        if scope["type"] != "http" or route is None:  # the lifespan, or no route: Starlette's own answers
            await super().app(scope, receive, send)
            return
        scope.setdefault("router", self)
        await route.handle(scope, receive, send)
