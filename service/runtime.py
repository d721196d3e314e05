"""The long-lived parts one app instance works with, chosen once at start-up."""

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from reactstep.service.backends import open_store, open_vector_store
from reactstep.service.llm.completions import LiteLLMGateway
from reactstep.service.llm.configured import DefaultLLMCheck
from reactstep.service.llm.metered import MeteredGateway
from reactstep.service.llm.protocol import LLMGateway
from reactstep.service.metrics import Metrics
from reactstep.service.setting_problems import RefusedSetting
from reactstep.service.settings import Settings
from reactstep.tools.catalog import default_registry
from reactstep.tools.embedding.embeddings import MODEL_NAME, Embedder, LocalEmbedder
from reactstep.tools.embedding.local_models import local_model
from reactstep.tools.projects.journal import Projects
from reactstep.tools.ranking.fusion import RetrievalConfig
from reactstep.tools.registry import ToolLimits, ToolRegistry
from reactstep.tools.store.objects import ObjectStore
from reactstep.tools.vector_store.store import VectorStore
from reactstep.tools.writes.approval import Approvals, open_approvals


class OnDemand:
    """Opens the vector store on first use, once, from any thread; an embedded store is
    locked by its process, so opening it only when a search or index needs it keeps
    `ask` and `upload` usable beside a running server."""

    def __init__(self, opener: Callable[[], VectorStore]) -> None:
        self._opener = opener
        self._lock = threading.Lock()
        self._store: VectorStore | None = None

    def get(self) -> VectorStore:
        """The store, opened now if it was not yet."""
        with self._lock:
            if self._store is None:
                self._store = self._opener()
            return self._store

    def close(self) -> None:
        """Close the store if it was opened."""
        with self._lock:
            if self._store is not None:
                self._store.close()
                self._store = None


@dataclass(frozen=True)
class Runtime:
    """Settings and back-ends; nothing here holds per-session state."""

    settings: Settings
    llm: LLMGateway
    store: ObjectStore
    registry: ToolRegistry
    vectors: OnDemand
    embedder: Embedder
    metrics: Metrics
    limits: ToolLimits = field(init=False)
    approvals: Approvals = field(init=False)
    retrieval: RetrievalConfig = field(default_factory=RetrievalConfig)  # benchmarks pass other weights
    projects: Projects = field(init=False)
    llm_check: DefaultLLMCheck = field(init=False)  # /readyz's llm verdict

    def __post_init__(self) -> None:
        object.__setattr__(self, "limits", tool_limits(self.settings))
        approvals = open_approvals(self.settings.approval_secret, self.settings.approval_ttl_s)
        object.__setattr__(self, "approvals", approvals)
        retention_s = self.settings.version_retention_days * 86400
        object.__setattr__(self, "projects", Projects(self.store, retention_s))
        object.__setattr__(self, "llm_check", DefaultLLMCheck(self.settings))


def tool_limits(settings: Settings) -> ToolLimits:
    """The tool limits the settings ask for (the file size; the others are the tools' own)."""
    return ToolLimits(file_max_bytes=settings.file_max_bytes)


def check_embedding_model(settings: Settings) -> None:
    """RefusedSetting when the settings name a local embedding model this build does not have."""
    if settings.embedding_model.startswith("local/"):
        try:
            local_model(settings.embedding_model)
        except ValueError as exc:
            raise RefusedSetting("embedding_model", str(exc)) from None


def local_embedder(settings: Settings) -> LocalEmbedder:
    """The local model the settings name (the int8 default when they name a litellm one); it loads on
    first use, not here."""
    check_embedding_model(settings)
    model = settings.embedding_model if settings.embedding_model.startswith("local/") else MODEL_NAME
    return LocalEmbedder(settings.models_root, threads=settings.embedding_threads, model=model)


def build_runtime(
    settings: Settings,
    llm: LLMGateway | None = None,
    store: ObjectStore | None = None,
    registry: ToolRegistry | None = None,
    vectors: VectorStore | None = None,
    embedder: Embedder | None = None,
    retrieval: RetrievalConfig | None = None,
) -> Runtime:
    """Real back-ends from the settings, unless the caller passes its own; the LLM is metered either way."""
    metrics = Metrics()
    return Runtime(
        settings=settings,
        llm=MeteredGateway(llm or LiteLLMGateway(max_workers=settings.max_concurrent_requests), metrics),
        store=store or open_store(settings),
        registry=registry or default_registry(),
        vectors=OnDemand((lambda: vectors) if vectors is not None else (lambda: open_vector_store(settings))),
        embedder=embedder or local_embedder(settings),
        metrics=metrics,
        retrieval=retrieval or RetrievalConfig(),
    )
