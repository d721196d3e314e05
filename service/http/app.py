"""The app factory: the route table, error handlers, and the runtime they share.

ROUTES is the one route table: ObserveMiddleware matches each request against it once
(routing.match_route), and the layers after it (admission's body limit, the router) read that match.
"""

import contextlib
import gc
from collections.abc import AsyncIterator, Callable

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import Scope

from reactstep.service.errors import MethodNotAllowed, NotFound, ServiceError, error_response
from reactstep.service.http import endpoints, projects, steps
from reactstep.service.http.admission import AdmissionLimiter, AdmissionMiddleware
from reactstep.service.http.auth import AuthMiddleware, parse_key_entries
from reactstep.service.http.background_steps import background_steps
from reactstep.service.http.direct import DirectRoutes
from reactstep.service.http.disconnects import CancelOnDisconnect
from reactstep.service.http.idempotency import IdempotencyMiddleware
from reactstep.service.http.mcp import mcp_endpoint, open_mcp
from reactstep.service.http.observe import ObserveMiddleware
from reactstep.service.http.routing import MatchedRouter, allowed_methods
from reactstep.service.llm.protocol import LLMGateway
from reactstep.service.logs.context import stamp_request_ids
from reactstep.service.redaction import install_log_scrubber, remember_server_secrets
from reactstep.service.runtime import Runtime, build_runtime
from reactstep.service.settings import Settings
from reactstep.tools.embedding.embeddings import Embedder
from reactstep.tools.ranking.fusion import RetrievalConfig
from reactstep.tools.registry import ToolRegistry
from reactstep.tools.store.objects import ObjectStore
from reactstep.tools.vector_store.store import VectorStore

# What a browser client may send and read (REACTSTEP_CORS_ORIGINS); the key travels in Authorization.
CORS_METHODS = ("GET", "POST", "PUT", "DELETE")
CORS_HEADERS = (
    "authorization",
    "content-type",
    "if-match",
    "if-none-match",
    "x-request-id",
    "last-event-id",
    "idempotency-key",
)
CORS_EXPOSED = ("x-request-id", "etag", "retry-after", "www-authenticate", "location", "idempotent-replayed")
QUEUE_TIMEOUT_S = 10.0  # a queued request waits at most this long for a slot, then 503 overloaded
OVERLOAD_RETRY_AFTER_S = 1  # a slot frees within a step's first model call; clients come back soon
READING_BODIES_PER_SLOT = 4  # bodies on their way per slot (256 at 64): a few slow senders never starve it

EXECUTE_ACTION = Route("/api/agent/execute_action", endpoints.execute_action, methods=["POST"])
FILES = "/api/projects/{project_id}/files/{path:path}"  # its routes take up to file_max_bytes of body
REACT_STEP = Route("/api/agent/react_step", endpoints.react_step, methods=["POST"])
ROUTES = [
    REACT_STEP,
    EXECUTE_ACTION,
    Route("/api/agent/tools", endpoints.list_tools, methods=["GET"]),
    Route("/api/agent/steps/{step_id}", steps.get_step, methods=["GET"]),
    Route("/api/agent/steps/{step_id}", steps.delete_step, methods=["DELETE"]),
    Route("/api/agent/steps/{step_id}/events", steps.get_step_events, methods=["GET"]),
    Route("/api/projects/{project_id}", projects.put_project, methods=["PUT"]),
    Route("/api/projects/{project_id}", projects.get_project, methods=["GET"]),
    Route("/api/projects/{project_id}", projects.remove_project, methods=["DELETE"]),
    Route(FILES, projects.put_project_file, methods=["PUT"]),
    Route(FILES, projects.get_project_file, methods=["GET"]),
    Route(FILES, projects.delete_project_file, methods=["DELETE"]),
    Route("/api/projects/{project_id}/sync", projects.sync_project, methods=["POST"]),
    Route("/api/projects/{project_id}/changes", projects.project_changes, methods=["GET"]),
    Route("/api/projects/{project_id}/gc", projects.collect_project_garbage, methods=["POST"]),
    Route("/api/projects/{project_id}/index", projects.index_project, methods=["POST"]),
    Route("/api/projects/{project_id}/index", projects.stop_index, methods=["DELETE"]),
    Route("/healthz", endpoints.healthz, methods=["GET"]),
    Route("/readyz", endpoints.readyz, methods=["GET"]),
    Route("/version", endpoints.server_version, methods=["GET"]),
    Route("/metrics", endpoints.metrics, methods=["GET"]),
    Route("/openapi.yaml", endpoints.openapi_spec, methods=["GET"]),
    Route("/mcp/{project_id}", mcp_endpoint, methods=["POST"]),
]
# The routes that change something take an Idempotency-Key: every POST, PUT and DELETE but /mcp's.
# What takes an Idempotency-Key: every route that changes something, but /mcp (its own protocol) and
# the two that stop work (an index run, a background step), which a resend cannot do twice anyway.
STOPS = (projects.stop_index, steps.delete_step)
KEYED = tuple(
    route
    for route in ROUTES
    if {"POST", "PUT", "DELETE"} & (route.methods or set())
    and not route.path.startswith("/mcp/")
    and route.endpoint not in STOPS
)


def create_app(
    settings: Settings | None = None,
    *,
    llm: LLMGateway | None = None,
    store: ObjectStore | None = None,
    registry: ToolRegistry | None = None,
    vectors: VectorStore | None = None,
    embedder: Embedder | None = None,
    retrieval: RetrievalConfig | None = None,
) -> Starlette:
    """Build the service; tests pass their own back-ends, production passes none."""
    runtime = build_runtime(settings or Settings(), llm, store, registry, vectors, embedder, retrieval)
    remember_server_secrets(runtime.settings)
    install_log_scrubber()
    stamp_request_ids()

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        warming = runtime.llm_check.serve()  # /readyz answers within its deadline from now on
        # What start-up loads (litellm and its tables: about a million objects) lives as long as the
        # process: frozen out of the collector once in, a full collection no longer walks it (it
        # paused every request for ~0.1 s after every few large bodies, bench/stalls.py).
        warming.add_done_callback(lambda _: gc.freeze())
        try:
            async with app.state.mcp.serving():
                yield
        finally:
            runtime.vectors.close()  # releases an embedded store's lock for the next process

    app = Starlette(
        middleware=_middleware(runtime),
        # Anything else becomes a 500 internal_error in ObserveMiddleware, inside the request's context.
        exception_handlers={ServiceError: _service_error, HTTPException: _http_error},
    )
    app.router = MatchedRouter(ROUTES, lifespan=lifespan)
    app.state.runtime = runtime
    app.state.background_steps = background_steps(runtime)
    app.state.mcp = open_mcp(runtime)
    return app


def _middleware(runtime: Runtime) -> list[Middleware]:
    """Outermost first: the request's id, log line and metrics; CORS (a preflight needs no key, and a
    browser may read a 401); who is calling (401); whether there is room (503); a step cancelled
    when its client leaves; an answer kept for the request's Idempotency-Key (inside the
    cancellation, so a request its client left is released, never kept); the hot routes answered
    directly; then the router."""
    settings, metrics = runtime.settings, runtime.metrics
    limiter = AdmissionLimiter(settings.max_concurrent_requests, settings.max_queue, QUEUE_TIMEOUT_S)
    metrics.watch_admission(lambda: limiter.active, lambda: limiter.waiting)
    cors = []
    if settings.cors_origins:
        cors = [
            Middleware(
                CORSMiddleware,
                allow_origins=settings.cors_origins,
                allow_methods=CORS_METHODS,
                allow_headers=CORS_HEADERS,
                allow_credentials=False,  # never: with '*' it would hand any site a user's cookies
                expose_headers=CORS_EXPOSED,
            )
        ]
    return [
        Middleware(ObserveMiddleware, metrics=metrics, routes=ROUTES),
        *cors,
        Middleware(AuthMiddleware, entries=parse_key_entries(settings.api_keys)),
        Middleware(
            AdmissionMiddleware,
            limiter=limiter,
            retry_after_s=OVERLOAD_RETRY_AFTER_S,
            body_limit=_body_limit(settings),
            body_timeout_s=settings.body_timeout_s,
            max_reading=READING_BODIES_PER_SLOT * settings.max_concurrent_requests,
            rejected=metrics.rejected,
        ),
        Middleware(CancelOnDisconnect, paths=[REACT_STEP.path], cancelled=metrics.request_cancelled),
        Middleware(
            IdempotencyMiddleware,
            store=runtime.store,
            keep_s=settings.idempotency_keep_s,
            keyed=lambda scope: scope.get("route") in KEYED,
        ),
        # Innermost: the hot routes skip Starlette's exception layer and router (same answers).
        Middleware(
            DirectRoutes, runtime=runtime, answers=[(EXECUTE_ACTION, endpoints.answer_execute_action)]
        ),
    ]


def _body_limit(settings: Settings) -> Callable[[Scope], int]:
    """The largest body each route reads (admission refuses larger ones with 413)."""

    def limit(scope: Scope) -> int:
        if getattr(scope.get("route"), "path", None) == FILES:
            return settings.file_max_bytes
        return settings.max_body_bytes

    return limit


async def _service_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, ServiceError)
    return error_response(exc)


async def _http_error(request: Request, exc: Exception) -> JSONResponse:
    """The router's refusals as errors of the tree; nothing else here raises HTTPException."""
    assert isinstance(exc, HTTPException)
    message = f"{request.method} {request.url.path}: {exc.detail}"
    if exc.status_code == 404:
        return error_response(NotFound(message))
    if exc.status_code == 405:  # the router names the first route on the path; Allow names them all
        allowed = allowed_methods(request.scope["route"], ROUTES)
        return error_response(MethodNotAllowed(message, allowed=allowed))
    raise exc
