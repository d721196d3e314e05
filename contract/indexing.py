"""POST /api/projects/{project_id}/index: the request, the run's progress and what it did."""

from typing import Any, Literal

from pydantic import ConfigDict, Field

from reactstep.contract.common import (
    EmbeddingModelConfig,
    StrictModel,
    UserApiKeys,
    WireModel,
    nulls_left_out,
)


class IndexRequest(StrictModel):
    """POST /api/projects/{project_id}/index; every field is optional."""

    embedding_model_config: EmbeddingModelConfig | None = None
    user_api_keys: UserApiKeys = Field(default_factory=UserApiKeys)
    background: bool = False
    """Answer 202 at once; GET /api/projects/{project_id} shows the run's progress."""
    stream: bool = False
    """Answer Server-Sent Events, `progress` then one `result` or `error`."""
    full: bool = False
    """Re-check every file. By default a run after the first (same embedding model) looks only at the paths
    the project's change journal names since the version the index described.
    """


class IndexResponse(WireModel):
    """What one indexing run did."""

    project_id: str
    collection: str
    """The vector collection, one per embedding model and dimension."""
    files: int
    """Text files looked at (in an incremental run, the changed ones only)."""
    chunks: int
    """Chunks the index now holds for those files."""
    embedded: int
    """Chunks embedded in this run (new or changed text)."""
    reused: int
    """Chunks kept without embedding."""
    removed: int
    """Chunks deleted (changed text, deleted or skipped files)."""
    skipped: int
    """Files not indexed (binary or larger than REACTSTEP_FILE_MAX_BYTES)."""
    noise: dict[str, int] = Field(
        {}, json_schema_extra={"propertyNames": {"enum": ["vendored", "generated", "minified", "data"]}}
    )
    """Files left out of search, per kind: vendored (node_modules/, vendor/, third_party/ ...,
    or linguist-vendored), generated (linguist-generated, or a generator's banner such as
    "DO NOT EDIT"), minified, data (a table of literals). They stay readable by read_file, grep
    and find_definition.
    """
    parsed: int
    """Files parsed for the symbol index in this run: those whose content changed since their
    entry was stored (0 on a re-run over an unchanged tree).
    """
    symbols: int
    """Symbols (functions, methods, classes, variables) the symbol index now holds."""
    seconds: float
    indexed_version: int = 0
    """The project version the index now describes (changes during the run keep it stale)."""
    incremental: bool = False
    """Only the files changed since the last run were looked at."""

    def summary(self) -> str:
        """The one line `reactstep index` always prints."""
        what = f"re-indexed {self.files} changed files" if self.incremental else f"indexed {self.files} files"
        return (
            f"{what}: {self.chunks} chunks, {self.embedded} embedded, "
            f"{self.reused} reused, {self.removed} removed, {self.skipped} skipped{self._noise_summary()}; "
            f"{self.parsed} parsed for {self.symbols} symbols in {self.seconds:.1f}s"
        )

    def _noise_summary(self) -> str:
        if not self.noise:
            return ""
        kinds = ", ".join(f"{count} {kind}" for kind, count in sorted(self.noise.items()))
        return f", {sum(self.noise.values())} left out of search as noise ({kinds})"


class IndexProgress(WireModel):
    """How far an index run has come (an SSE `progress` event; the fields of an IndexJob)."""

    phase: Literal["scan", "embed", "write", "done"]
    """In this order: planning files, embedding new chunks, the last writes, over."""
    files_done: int
    """Files planned so far."""
    files_total: int
    """Files this run looks at (every indexable file, or the changed ones)."""
    chunks_done: int
    """New chunks embedded (or found in the embedding cache) so far."""
    chunks_total: int
    """New chunks this run writes; final once the scan is over. Equal to chunks_done at `done`."""
    path: str
    """The latest file planned or embedded."""


class IndexJob(IndexProgress):
    """An index run at work, as kept in the project's head (its heartbeat rewrites it every second)."""

    model_config = ConfigDict(json_schema_extra=nulls_left_out)

    state: Literal["running"] | None = None
    job_id: str | None = None
    started: float | None = None
    """Unix time the run started."""
    updated: float | None = None
    """Unix time of its last heartbeat."""
    embedding_model_config: Any = None
    """The run's model, to start it again should its server die (never any key)."""
    full: bool | None = None
    stopping: bool | None = None
    """A stop was asked (DELETE /api/projects/{project_id}/index): the run ends at its next step."""


class IndexAccepted(WireModel):
    """POST .../index with `background: true`."""

    project_id: str
    indexing: dict[str, Any]
    """The job's state (an IndexJob), or `{state: done, indexed_version}` when it already ended."""


class IndexStop(WireModel):
    """DELETE /api/projects/{project_id}/index: the run at work stopped (or none was at work)."""

    project_id: str
    stopped: bool
    """A run was at work and has ended; false: there was none to stop."""
    indexed_version: int
    """The version the index describes: a stopped run does not move it, and the next run completes it."""
    index_state: Literal["ready", "stale", "indexing"]
    """As GET /api/projects/{project_id} reports it: `stale` after a stopped run."""
