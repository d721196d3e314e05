"""Index a project's files from the object store into the vector store, doing only what changed.

    store.list ──► per file: etag equal to the one on its indexed points? ── yes ──► keep
        │                                                              └─ no ──► read, chunk
        │        chunk key = (path, hash of the embedded text, n-th occurrence): same key, same point
        │            key known, lines moved ──► update start/end lines (no embedding)
        │            key new               ──► dense vectors of the chunk and of its name (name_text)
        │                                          from the cache by content, else embed;
        │                                          encode (sparse) ──► upsert
        │            old keys of the file not seen again ──► delete
        └──► files gone from the store ──► delete their points

A vendored, generated, minified or data-table file (noise.py) gets no points: its chunks would crowd
real code out of the results; it stays in the store and the symbol index, and the run counts it.

Point ids are derived from the key, so a re-run on an unchanged tree embeds nothing. The one parse of a
file also feeds the symbol index (symbols.py); a file whose points are current is parsed only when
its symbol index entry is not. The project overview is rebuilt from the symbol index at the end of a run.
"""

import hashlib
import time
import uuid
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from reactstep.tools.embedding.embeddings import Embedder
from reactstep.tools.embedding.sparse import encode_document
from reactstep.tools.errors import ToolError
from reactstep.tools.index.chunk_text import dense_text, embedding_text, name_text
from reactstep.tools.index.embedding_cache import EmbeddingCache
from reactstep.tools.index.embedding_pipeline import embed_and_write
from reactstep.tools.index.noise import NoiseRules, load_noise_rules, noise_in_text
from reactstep.tools.index.overview import save_overview
from reactstep.tools.index.progress import Progress, RunProgress
from reactstep.tools.index.symbols import SymbolIndexUpdate, load_symbol_index, save_symbol_index
from reactstep.tools.ranking.retrieval import collection_name, embedding_space
from reactstep.tools.source.chunking import Chunk, FileOutline, detect_language, outline_file
from reactstep.tools.store.objects import ObjectInfo, ObjectStore
from reactstep.tools.vector_store.store import CHUNK_VECTORS, ChunkPoint, VectorStore

_NAMESPACE = uuid.UUID("9a4c2f1e-5b7d-4e8a-9c3f-2d1b0a6e7f58")


@dataclass
class IndexReport:
    """What one indexing run did."""

    files: int = 0
    chunks: int = 0
    embedded: int = 0
    reused: int = 0
    removed: int = 0
    skipped: int = 0
    noise: Counter[str] = field(default_factory=Counter)  # files left out of search, per kind (noise.py)
    seconds: float = 0.0
    collection: str = ""
    parsed: int = 0  # files parsed for the symbol index in this run
    symbols: int = 0  # symbols the symbol index now holds


NewPoint = tuple[str, Chunk, dict[str, Any]]  # point id, chunk, facts of its file


@dataclass
class Plan:
    """The work one run will do, worked out before any embedding (incremental.py plans the same way)."""

    new_points: list[NewPoint] = field(default_factory=list)
    moved: dict[str, dict[str, Any]] = field(default_factory=dict)
    stale: list[str] = field(default_factory=list)
    symbols: SymbolIndexUpdate = field(default_factory=lambda: SymbolIndexUpdate(None))
    noise: NoiseRules = field(default_factory=NoiseRules)


def index_project(
    project_id: str,
    store: ObjectStore,
    vectors: VectorStore,
    embedder: Embedder,
    *,
    max_file_bytes: int,
    progress: Progress | None = None,
) -> IndexReport:
    """Bring the project's points in line with its files; return what was done."""
    started = time.perf_counter()
    report = IndexReport(collection=collection_name(embedder))
    vectors.ensure_collection(report.collection, embedder.dimension, CHUNK_VECTORS)
    indexed = _points_by_file(vectors.project_points(report.collection, project_id))
    listed = list(store.list(project_id))
    files = [info for info in listed if detect_language(info.path) is not None]
    plan = Plan(symbols=SymbolIndexUpdate(load_symbol_index(store, project_id)))
    plan.noise = load_noise_rules(store, project_id)
    run = RunProgress(progress)
    for done, info in enumerate(files, start=1):
        plan_file(project_id, store, info, indexed.pop(info.path, {}), plan, report, max_file_bytes)
        run.planned(done, len(files), len(plan.new_points), info.path)
    plan.stale.extend(point_id for points in indexed.values() for point_id in points)
    apply_plan(plan, project_id, vectors, embedder, report, run)
    _save_symbols(project_id, store, plan.symbols, listed, report)
    run.done()
    report.seconds = time.perf_counter() - started
    return report


def _save_symbols(
    project_id: str,
    store: ObjectStore,
    update: SymbolIndexUpdate,
    listed: list[ObjectInfo],
    report: IndexReport,
) -> None:
    """Store the symbol index (when it changed) and the overview built from it."""
    symbol_index = update.finish(listed)
    if update.changed:
        save_symbol_index(store, project_id, symbol_index)
    save_overview(store, project_id, listed, symbol_index)
    report.parsed = update.parsed
    report.symbols = sum(len(entry.symbols) for entry in symbol_index.files.values())


def _points_by_file(points: dict[str, dict[str, Any]]) -> dict[str, dict[str, dict[str, Any]]]:
    by_file: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
    for point_id, payload in points.items():
        by_file[str(payload["path"])][point_id] = payload
    return by_file


def plan_file(
    project_id: str,
    store: ObjectStore,
    info: ObjectInfo,
    existing: dict[str, dict[str, Any]],
    plan: Plan,
    report: IndexReport,
    max_file_bytes: int,
) -> None:
    report.files += 1
    by_path = plan.noise.by_path(info.path)
    current = by_path is None and info.size <= max_file_bytes and _complete(existing, info.etag)
    read = None
    if not current or plan.symbols.wants(info):
        read = _read_outline(project_id, store, info, max_file_bytes, plan.symbols)
    noise = by_path or (noise_in_text(read[1]) if read is not None else None)
    if noise is not None:  # kept in the store and the symbol index, left out of search
        report.noise[noise] += 1
        plan.stale.extend(existing)
        return
    if current:
        report.chunks += len(existing)
        report.reused += len(existing)
        return
    if read is None:
        report.skipped += 1
        plan.stale.extend(existing)
        return
    chunks = read[0].chunks
    report.chunks += len(chunks)
    seen: set[str] = set()
    for point_id, chunk in _keyed(project_id, chunks):
        seen.add(point_id)
        old = existing.get(point_id)
        if old is None:
            plan.new_points.append((point_id, chunk, {"file_etag": info.etag, "file_chunks": len(chunks)}))
            continue
        report.reused += 1
        lines = {
            "start_line": chunk.start_line,
            "end_line": chunk.end_line,
            "file_etag": info.etag,
            "file_chunks": len(chunks),
        }
        if any(old.get(key) != value for key, value in lines.items()):
            plan.moved[point_id] = lines
    plan.stale.extend(point_id for point_id in existing if point_id not in seen)


def _complete(existing: dict[str, dict[str, Any]], etag: str) -> bool:
    """Whether the file's points are all there and all from this version of the file."""
    return bool(existing) and all(
        payload.get("file_etag") == etag and payload.get("file_chunks") == len(existing)
        for payload in existing.values()
    )


def _read_outline(
    project_id: str, store: ObjectStore, info: ObjectInfo, max_file_bytes: int, symbols: SymbolIndexUpdate
) -> tuple[FileOutline, str] | None:
    """The file's one parse (recorded in the symbol index) and its text, or None when too large,
    binary or gone."""
    if info.size > max_file_bytes:
        return None
    try:
        data = store.get(project_id, info.path)
    except ToolError:
        return None  # deleted between list and get: its points go as stale
    if b"\x00" in data[:8192]:
        return None
    text = data.decode("utf-8", errors="replace")
    outline = outline_file(info.path, text)
    symbols.record(info, text, outline)
    return outline, text


def _keyed(project_id: str, chunks: Sequence[Chunk]) -> Iterable[tuple[str, Chunk]]:
    """Each chunk with its point id: path + text hash + occurrence, not line numbers."""
    occurrences: Counter[str] = Counter()
    for chunk in chunks:
        text_hash = hashlib.sha256(embedding_text(chunk).encode()).hexdigest()
        occurrences[text_hash] += 1
        key = f"{project_id}\0{chunk.path}\0{text_hash}\0{occurrences[text_hash]}"
        yield str(uuid.uuid5(_NAMESPACE, key)), chunk


def apply_plan(
    plan: Plan,
    project_id: str,
    vectors: VectorStore,
    embedder: Embedder,
    report: IndexReport,
    run: RunProgress,
) -> None:
    """Write the plan: new points (embedded, `run` told after each window), moves, deletes."""
    collection = report.collection
    run.embedding()
    if plan.new_points:
        _add_points(plan, project_id, vectors, embedder, report, run)
    run.writing()
    if plan.moved:
        vectors.update_payload(collection, plan.moved)
    if plan.stale:
        vectors.delete(collection, plan.stale)
        report.removed += len(plan.stale)


def _add_points(
    plan: Plan,
    project_id: str,
    vectors: VectorStore,
    embedder: Embedder,
    report: IndexReport,
    run: RunProgress,
) -> None:
    """Upsert the new points, their dense and name vectors from the cache where it has them.

    `embedded` counts chunk texts the model embedded; their short name texts are embedded beside them.
    """
    if not plan.new_points:
        return
    cache = EmbeddingCache(vectors, embedding_space(embedder), embedder.dimension)  # across formats

    def write(window: Sequence[NewPoint], vectors_of: list[list[list[float]]]) -> None:
        points = [
            ChunkPoint(
                point_id,
                dense,
                encode_document(embedding_text(chunk)),
                _payload(project_id, chunk, facts),
                name=name,
            )
            for (point_id, chunk, facts), (dense, name) in zip(window, vectors_of, strict=True)
        ]
        vectors.upsert(report.collection, points)

    embedded, _ = embed_and_write(
        plan.new_points,
        lambda point: (dense_text(point[1]), name_text(point[1])),
        cache,
        embedder,
        write,
        lambda window: run.embedded(len(window), window[-1][1].path),
    )
    report.embedded += embedded
    report.reused += len(plan.new_points) - embedded


def _payload(project_id: str, chunk: Chunk, file_facts: dict[str, Any]) -> dict[str, Any]:
    return {
        "project_id": project_id,
        "path": chunk.path,
        "start_line": chunk.start_line,
        "end_line": chunk.end_line,
        "language": chunk.language,
        "symbol": chunk.symbol,
        "kind": chunk.kind,
        "signature": chunk.signature,
        "content_hash": chunk.content_hash,
        "content": chunk.content,
        **file_facts,
    }
