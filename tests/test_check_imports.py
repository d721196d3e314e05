"""scripts/check_imports.py holds the tree to its rules, and rejects a loop between folders even when no
two modules import each other."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
try:
    import check_imports  # type: ignore[import-not-found]
finally:
    sys.path.remove(str(ROOT / "scripts"))


def test_the_tree_keeps_the_rules() -> None:
    checked = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "check_imports.py")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert checked.returncode == 0, checked.stdout
    assert checked.stdout.endswith(", 0 problems\n")


@pytest.mark.parametrize(
    ("graph", "loops"),
    [
        # two folders, each reaching the other through different modules: no cycle of modules, a loop
        (
            {
                "reactstep.service.http.app": {"reactstep.service.mcp.http"},
                "reactstep.service.mcp.http": {"reactstep.service.http.auth"},
            },
            [
                "import loop in reactstep.service among reactstep.service.http, reactstep.service.mcp: "
                "reactstep.service.http.app imports reactstep.service.mcp.http; "
                "reactstep.service.mcp.http imports reactstep.service.http.auth"
            ],
        ),
        # a ground-floor module and a sub-folder
        (
            {
                "reactstep.service.limits": {"reactstep.service.llm.protocol"},
                "reactstep.service.llm.config": {"reactstep.service.limits"},
            },
            [
                "import loop in reactstep.service among reactstep.service.limits, reactstep.service.llm: "
                "reactstep.service.limits imports reactstep.service.llm.protocol; "
                "reactstep.service.llm.config imports reactstep.service.limits"
            ],
        ),
        # a cycle of modules in one folder is a loop there
        (
            {"reactstep.tools.a": {"reactstep.tools.b"}, "reactstep.tools.b": {"reactstep.tools.a"}},
            [
                "import loop in reactstep.tools among reactstep.tools.a, reactstep.tools.b: "
                "reactstep.tools.a imports reactstep.tools.b; reactstep.tools.b imports reactstep.tools.a"
            ],
        ),
        # one way, and a package's own modules: no loop
        (
            {
                "reactstep.service.http.app": {"reactstep.service.mcp.server"},
                "reactstep.service.mcp.server": {"reactstep.service.errors"},
            },
            [],
        ),
        ({"reactstep.service.parsing.readers": {"reactstep.service.parsing.readers.react_text"}}, []),
    ],
)
def test_a_loop_between_folders_is_rejected(graph: dict[str, set[str]], loops: list[str]) -> None:
    assert check_imports.folder_loops(graph) == loops


def test_the_request_body_reader_may_not_reach_the_store() -> None:
    graph = {"reactstep.service.http.bodies": {"reactstep.tools.store.paths"}}
    assert check_imports.rule_problems(graph) == [
        "reactstep.service.http.bodies imports reactstep.tools.store.paths: "
        "reactstep.service.http.bodies must not import reactstep.tools.store"
    ]
