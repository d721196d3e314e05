"""Index just some files of a project: a write tool's files, or what changed since the last run.

    index_paths(paths) ─► per path: its points (a path filter), its store entry ─► plan_file ─► apply
        ─► the symbol index updated for those paths ─► the overview rebuilt from one listing when
        a path is new or gone (an edit of a known file leaves it to the next run)
    index_changes(journal paths) ─► the same, for the journal's paths plus every file whose store
        etag is not the one its symbol index entry was parsed from (a change made behind the
        journal's back, such as a write straight to the bucket); None when there is no symbol
        index to compare with, or too much changed: the caller runs the whole project instead

The cost follows the number of changed files: no scroll over the project's points, no read of an
unchanged file. The listing and the symbol index are read once (the overview needs both anyway).
"""

import time
from collections.abc import Iterable, Sequence

from reactstep.tools.embedding.embeddings import Embedder
from reactstep.tools.index.indexer import IndexReport, Plan, apply_plan, plan_file
from reactstep.tools.index.noise import load_noise_rules
from reactstep.tools.index.overview import save_overview
from reactstep.tools.index.progress import Progress, RunProgress
from reactstep.tools.index.symbols import SymbolIndex, SymbolIndexUpdate, load_symbol_index, save_symbol_index
from reactstep.tools.ranking.retrieval import collection_name
from reactstep.tools.source.chunking import detect_language
from reactstep.tools.store.objects import ObjectInfo, ObjectStore
from reactstep.tools.store.paths import ProjectPath
from reactstep.tools.vector_store.store import CHUNK_VECTORS, VectorStore


def index_paths(
    project_id: str,
    store: ObjectStore,
    vectors: VectorStore,
    embedder: Embedder,
    paths: Sequence[ProjectPath],
    *,
    max_file_bytes: int,
    progress: Progress | None = None,
) -> IndexReport:
    """Bring just these files' points and symbols in line with the store."""
    previous = load_symbol_index(store, project_id)
    return _index(project_id, store, vectors, embedder, paths, previous, None, max_file_bytes, progress)


def index_changes(
    project_id: str,
    store: ObjectStore,
    vectors: VectorStore,
    embedder: Embedder,
    named: Iterable[ProjectPath],
    *,
    max_file_bytes: int,
    max_paths: int,
    progress: Progress | None = None,
) -> IndexReport | None:
    """Re-index the named paths and every file that drifted from its symbol index entry.

    None (nothing done) when the project has no readable symbol index or more than max_paths
    files to look at: a whole run is the better plan then.
    """
    previous = load_symbol_index(store, project_id)
    if previous is None:
        return None
    listed = list(store.list(project_id))
    paths = sorted(set(named) | drifted(listed, previous, max_file_bytes))
    if len(paths) > max_paths:
        return None
    return _index(project_id, store, vectors, embedder, paths, previous, listed, max_file_bytes, progress)


def drifted(listed: Sequence[ObjectInfo], previous: SymbolIndex, max_file_bytes: int) -> set[ProjectPath]:
    """Indexable files without an entry or with another etag than it, and entries whose file is gone."""
    found = set()
    for info in listed:
        if info.size > max_file_bytes or detect_language(info.path) is None:
            continue
        entry = previous.files.get(info.path)
        if entry is None or entry.etag != info.etag:
            found.add(info.path)
    here = {info.path for info in listed}
    # an entry names a path a listing gave when the index was built
    return found | {ProjectPath(path) for path in previous.files if path not in here}


def _files_came_or_went(current: dict[str, ObjectInfo | None], previous: SymbolIndex | None) -> bool:
    """Whether a path is new or gone: an edit of a known file leaves the overview to the next run
    (listing and summing up every file is most of what re-indexing one file of a large project costs)."""
    known = previous.files if previous is not None else {}
    return any((info is None) == (path in known) for path, info in current.items())


def _index(
    project_id: str,
    store: ObjectStore,
    vectors: VectorStore,
    embedder: Embedder,
    paths: Sequence[ProjectPath],
    previous: SymbolIndex | None,
    listed: list[ObjectInfo] | None,
    max_file_bytes: int,
    progress: Progress | None,
) -> IndexReport:
    started = time.perf_counter()
    report = IndexReport(collection=collection_name(embedder))
    vectors.ensure_collection(report.collection, embedder.dimension, CHUNK_VECTORS)
    plan = Plan(symbols=SymbolIndexUpdate(previous), noise=load_noise_rules(store, project_id))
    current: dict[str, ObjectInfo | None] = {}
    run = RunProgress(progress)
    for done, path in enumerate(paths, start=1):
        points = vectors.project_points(report.collection, project_id, path)
        existing = {point_id: facts for point_id, facts in points.items() if facts.get("path") == path}
        info = current[path] = store.head(project_id, path)
        if info is not None and detect_language(path) is not None:
            plan_file(project_id, store, info, existing, plan, report, max_file_bytes)
        else:
            plan.stale.extend(existing)
        run.planned(done, len(paths), len(plan.new_points), path)
    apply_plan(plan, project_id, vectors, embedder, report, run)
    symbol_index = plan.symbols.finish_paths(current)
    if plan.symbols.changed:
        save_symbol_index(store, project_id, symbol_index)
    if listed is not None or _files_came_or_went(current, previous):
        save_overview(store, project_id, listed or list(store.list(project_id)), symbol_index)
    report.parsed = plan.symbols.parsed
    report.symbols = sum(len(entry.symbols) for entry in symbol_index.files.values())
    run.done()
    report.seconds = time.perf_counter() - started
    return report
