"""What keeping every version costs: store bytes per 1,000 edits of one file, and the time per edit.

Run: .venv/bin/python bench/version_cost.py [--edits 1000] [--size 4096]

Edits one file of --size bytes --edits times through the journaled store (what PUT, sync and approved
writes use) on a local store in a temporary dir, each edit changing a few bytes, then sums the bytes
of the project's index files by kind: blobs (the kept file bytes), journal (change entries and the
head), history (the per-path history), and what collection can free with retention 0.
"""

import argparse
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from stats import machine

from reactstep.tools.projects.gc import collect_garbage
from reactstep.tools.projects.journal import Projects
from reactstep.tools.projects.journaled import JournaledStore
from reactstep.tools.store.local import LocalStore
from reactstep.tools.store.objects import INDEX_DIR


def index_bytes(root: Path, project_id: str) -> Counter[str]:
    """Bytes of the project's index files by kind."""
    sizes: Counter[str] = Counter()
    for file in (root / INDEX_DIR / project_id).iterdir():
        kind = file.name.split("-")[0].split(".")[0]
        sizes[{"change": "journal", "head": "journal"}.get(kind, kind)] += file.stat().st_size
    return sizes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edits", type=int, default=1000)
    parser.add_argument("--size", type=int, default=4096)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        root = Path(work)
        store = LocalStore(root)
        projects = Projects(store)
        projects.create("bench")
        journaled = JournaledStore(store, projects, "sync")
        filler = b"x" * (args.size - 16)
        started = time.perf_counter()
        for edit in range(args.edits):
            journaled.put("bench", "src/edited.py", f"{edit:015d}\n".encode() + filler)
        elapsed = time.perf_counter() - started
        sizes = index_bytes(root, "bench")
        file_bytes = (root / "bench" / "src" / "edited.py").stat().st_size
        per_1000 = 1000 / args.edits
        print(f"{args.edits} edits of a {args.size}-byte file on the local store ({machine()})")
        print(f"  per edit: {elapsed / args.edits * 1000:.2f} ms")
        for kind in ("blob", "journal", "history"):
            print(f"  {kind:8s} {sizes[kind] * per_1000 / 1024:10.1f} KiB per 1,000 edits")
        total = sum(sizes[kind] for kind in ("blob", "journal", "history"))
        print(f"  total    {total * per_1000 / 1024:10.1f} KiB per 1,000 edits (file: {file_bytes} B)")
        kept = Projects(store, retention_s=0)
        freed = collect_garbage(store, kept, "bench", grace_s=0)
        print(f"  with retention 0, gc frees {len(freed.removed)} blobs (the last 100 versions stay)")


if __name__ == "__main__":
    main()
