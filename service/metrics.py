"""What `GET /metrics` shows, in Prometheus' text format: one registry per app, so the many apps a
test run builds never collide, and a process serves exactly its own counts.

    reactstep_http_requests_total{method, route, status}            route: the template, or "unmatched"
    reactstep_http_request_duration_seconds{method, route, status}  histogram
    reactstep_llm_call_duration_seconds{provider, outcome}          one per attempt; outcome: ok or a code
    reactstep_llm_retries_total{provider}                           attempts after the first
    reactstep_llm_tokens_total{provider, kind}                      prompt, completion, cached
    reactstep_llm_cost_usd_total{provider}                          priced replies, at litellm's prices
    reactstep_tool_duration_seconds{tool}                           histogram; "unknown" for unknown names
    reactstep_tool_errors_total{tool}                               observations with is_error true
    reactstep_admission_active, reactstep_admission_waiting         read when scraped
    reactstep_admission_rejections_total{reason}                    overloaded, request_timeout, ...
    reactstep_requests_cancelled_total{route}                       the client left; its work stopped
    reactstep_index_jobs_total{kind, outcome}                       kind: run (POST index, sync) | write
    reactstep_index_chunks_embedded_total{kind}

Every label takes values from a closed set (route templates, providers we route to, tool names in
the registry, error codes), never from free request text. Labelled children are looked up once and
kept, so a request costs a dict lookup and an observe per metric.
"""

from collections.abc import Callable
from functools import partial
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4

# Seconds: a local read_file is sub-millisecond, an LLM call takes seconds.
HTTP_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)
LLM_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60, 120)
TOOL_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30)
# The classic text format: every Prometheus version parses it (1.0.0 needs Prometheus 3).
CONTENT_TYPE = CONTENT_TYPE_PLAIN_0_0_4


class Metrics:
    """The app's metric families and the calls that record into them."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        registry = self.registry
        http_labels = ("method", "route", "status")
        self._requests = Counter(
            "reactstep_http_requests", "HTTP requests answered.", http_labels, registry=registry
        )
        self._request_seconds = Histogram(
            "reactstep_http_request_duration_seconds",
            "Time from a request's arrival to the end of its answer.",
            http_labels,
            buckets=HTTP_BUCKETS,
            registry=registry,
        )
        self._llm_seconds = Histogram(
            "reactstep_llm_call_duration_seconds",
            "One LLM call attempt, by provider and outcome (ok or the error code).",
            ("provider", "outcome"),
            buckets=LLM_BUCKETS,
            registry=registry,
        )
        self._llm_retries = Counter(
            "reactstep_llm_retries", "LLM attempts after a step's first.", ("provider",), registry=registry
        )
        self._llm_tokens = Counter(
            "reactstep_llm_tokens", "Tokens the provider reported.", ("provider", "kind"), registry=registry
        )
        self._llm_cost = Counter(
            "reactstep_llm_cost_usd",
            "US dollars the replies of models with a price cost, at litellm's prices.",
            ("provider",),
            registry=registry,
        )
        self._tool_seconds = Histogram(
            "reactstep_tool_duration_seconds",
            "One server tool run (execute_action).",
            ("tool",),
            buckets=TOOL_BUCKETS,
            registry=registry,
        )
        self._tool_errors = Counter(
            "reactstep_tool_errors", "Tool runs that answered is_error true.", ("tool",), registry=registry
        )
        self._rejections = Counter(
            "reactstep_admission_rejections",
            "Requests refused before they ran, by reason (the error code).",
            ("reason",),
            registry=registry,
        )
        self._cancelled = Counter(
            "reactstep_requests_cancelled",
            "Requests whose client left before the answer ended; their work (a model call) was cancelled.",
            ("route",),
            registry=registry,
        )
        self._index_jobs = Counter(
            "reactstep_index_jobs",
            "Indexing runs by kind and outcome.",
            ("kind", "outcome"),
            registry=registry,
        )
        self._chunks_embedded = Counter(
            "reactstep_index_chunks_embedded",
            "Chunks embedded by indexing runs (cached vectors not counted).",
            ("kind",),
            registry=registry,
        )
        self._children: dict[tuple[Any, ...], Any] = {}
        # The per-request calls keep their children's bound methods: no labels() lookup, no closure.
        self._http: dict[tuple[str, str, int], tuple[Callable[[], None], Callable[[float], None]]] = {}
        self._tool_observe: dict[str, Callable[[float], None]] = {}

    def http_request(self, method: str, route: str, status: int, seconds: float) -> None:
        """One answered request: the children's bound methods, cached per (method, route, status)."""
        recorders = self._http.get((method, route, status))
        if recorders is None:
            labels = (method, route, str(status))
            recorders = self._http[method, route, status] = (
                self._requests.labels(*labels).inc,
                self._request_seconds.labels(*labels).observe,
            )
        count, observe = recorders
        count()
        observe(seconds)

    def llm_call(self, provider: str, outcome: str, seconds: float, retry: bool) -> None:
        """One LLM call attempt; `retry`: it was not the step's first."""
        self._child(("llm", provider, outcome), lambda: self._llm_seconds.labels(provider, outcome)).observe(
            seconds
        )
        if retry:
            self._child(("retry", provider), lambda: self._llm_retries.labels(provider)).inc()

    def llm_tokens(self, provider: str, prompt: int, completion: int, cached: int) -> None:
        """Tokens one reply used, as the provider counted them."""
        for kind, count in (("prompt", prompt), ("completion", completion), ("cached", cached)):
            if count:
                self._child(("tokens", provider, kind), partial(self._llm_tokens.labels, provider, kind)).inc(
                    count
                )

    def llm_cost(self, provider: str, usd: float) -> None:
        """What one priced reply cost."""
        self._child(("cost", provider), partial(self._llm_cost.labels, provider)).inc(usd)

    def tool_call(self, tool: str, seconds: float, is_error: bool) -> None:
        """One execute_action tool run."""
        observe = self._tool_observe.get(tool)
        if observe is None:
            observe = self._tool_observe[tool] = self._tool_seconds.labels(tool).observe
        observe(seconds)
        if is_error:
            self._child(("tool_error", tool), lambda: self._tool_errors.labels(tool)).inc()

    def rejected(self, reason: str) -> None:
        """A request refused by admission (overloaded, request_timeout, payload_too_large)."""
        self._rejections.labels(reason).inc()

    def request_cancelled(self, route: str) -> None:
        """A request cancelled because its client left (http/disconnects.py)."""
        self._cancelled.labels(route).inc()

    def index_job(self, kind: str, outcome: str, embedded: int) -> None:
        """One indexing run and the chunks it embedded."""
        self._index_jobs.labels(kind, outcome).inc()
        if embedded:
            self._chunks_embedded.labels(kind).inc(embedded)

    def watch_admission(self, active: Callable[[], float], waiting: Callable[[], float]) -> None:
        """Gauges read from the admission limiter when scraped: no cost per request."""
        Gauge("reactstep_admission_active", "Requests at work.", registry=self.registry).set_function(active)
        Gauge(
            "reactstep_admission_waiting", "Requests queued for a slot.", registry=self.registry
        ).set_function(waiting)

    def exposition(self) -> bytes:
        """Every metric, in Prometheus' text format."""
        return generate_latest(self.registry)

    def _child(self, key: tuple[Any, ...], make: Callable[[], Any]) -> Any:
        child = self._children.get(key)
        if child is None:
            child = self._children[key] = make()
        return child
