"""Index a project for code_search, find_definition, find_importers and project_overview: the core behind
POST /api/projects/{id}/index and `reactstep index`."""

from typing import Any

from pydantic import BaseModel, Field

from reactstep.service.llm.embedding_config import resolve_embedder
from reactstep.service.runtime import Runtime
from reactstep.service.schemas import EmbeddingModelConfig, StrictModel, UserApiKeys
from reactstep.service.workspace.actions import translated_backend_errors
from reactstep.tools.index.indexer import IndexReport, Progress, index_project

# IndexReport fields the response carries as they are.
REPORTED = ("collection", "files", "chunks", "embedded", "reused", "removed", "skipped", "parsed", "symbols")


class IndexRequest(StrictModel):
    """POST /api/projects/{project_id}/index (the body may be empty)."""

    embedding_model_config: EmbeddingModelConfig | None = None
    user_api_keys: UserApiKeys = Field(default_factory=UserApiKeys)


class IndexResponse(BaseModel):
    """What one indexing run did."""

    project_id: str
    collection: str
    files: int
    chunks: int
    embedded: int
    reused: int
    removed: int
    skipped: int
    parsed: int
    symbols: int
    seconds: float

    def summary(self) -> str:
        """The one line `reactstep index` always prints."""
        return (
            f"indexed {self.files} files: {self.chunks} chunks, {self.embedded} embedded, "
            f"{self.reused} reused, {self.removed} removed, {self.skipped} skipped; "
            f"{self.parsed} parsed for {self.symbols} symbols in {self.seconds:.1f}s"
        )


def run_index(
    project_id: str, request: IndexRequest, runtime: Runtime, progress: Progress | None = None
) -> IndexResponse:
    """Bring the project's search index in line with its files in the store."""
    with translated_backend_errors():
        embedder = resolve_embedder(
            request.embedding_model_config, request.user_api_keys, runtime.settings, runtime.embedder
        )
        report = index_project(
            project_id,
            runtime.store,
            runtime.vectors.get(),
            embedder,
            max_file_bytes=runtime.settings.index_max_file_bytes,
            progress=progress,
        )
    return _response(project_id, report)


def _response(project_id: str, report: IndexReport) -> IndexResponse:
    fields: dict[str, Any] = {name: getattr(report, name) for name in REPORTED}
    return IndexResponse(project_id=project_id, seconds=round(report.seconds, 3), **fields)
