"""The search tools under small ToolLimits: grep's file size cut and list_files' page size."""

from pathlib import Path

import pytest

from reactstep.tools.catalog import default_registry
from reactstep.tools.registry import Observation, ToolContext, ToolLimits
from reactstep.tools.store.local import LocalStore


@pytest.fixture
def store(tmp_path: Path) -> LocalStore:
    """Five small files, one of them 12 bytes long."""
    store = LocalStore(tmp_path)
    for path, data in {
        "a.txt": b"hit\n",
        "b/c.txt": b"hit hit\n",
        "b/d.txt": b"hit\nmore hit\n",
        "e.txt": b"no\n",
        "f.txt": b"hit\n" * 3,
    }.items():
        store.put("demo", path, data)
    return store


def run(store: LocalStore, limits: ToolLimits, name: str, **args: object) -> Observation:
    return default_registry().execute(name, dict(args), ToolContext("demo", store, limits))


MATCHES = {
    "a": "a.txt:1:hit",
    "c": "b/c.txt:1:hit hit",
    "d": "b/d.txt:1:hit\nb/d.txt:2:more hit",
    "f": "f.txt:1:hit\nf.txt:2:hit\nf.txt:3:hit",
}


@pytest.mark.parametrize(
    ("limit", "observation"),
    [
        (11, f"Found 2 matches in 2 files\n{MATCHES['a']}\n{MATCHES['c']}\n[Skipped 2 files over 11 bytes]"),
        (
            12,
            f"Found 5 matches in 3 files\n{MATCHES['a']}\n{MATCHES['c']}\n{MATCHES['f']}\n"
            "[Skipped 1 file over 12 bytes]",
        ),
        (13, "Found 7 matches in 4 files\n" + "\n".join(MATCHES.values())),
    ],
)
def test_grep_skips_files_over_the_size_limit(store: LocalStore, limit: int, observation: str) -> None:
    assert run(store, ToolLimits(file_max_bytes=limit), "grep", pattern="hit") == Observation(observation)


@pytest.mark.parametrize(
    ("page", "observation"),
    [
        (
            1,
            "Contents of ./ (5 entries; page 1 of 3):\na.txt  (4 bytes)\nb/c.txt  (8 bytes)\n"
            '[Showing entries 1-2 of 5. For the next page, call list_files(path=".", depth=2, page=2)]',
        ),
        (
            3,
            "Contents of ./ (5 entries; page 3 of 3):\nf.txt  (12 bytes)",
        ),
    ],
)
def test_list_files_pages_at_the_page_size(store: LocalStore, page: int, observation: str) -> None:
    result = run(store, ToolLimits(list_files_page_size=2), "list_files", depth=2, page=page)
    assert result == Observation(observation)
