"""openapi-typescript eats openapi.yaml whole: the types generate without a word, a script typed by them
passes `tsc`, and it syncs, indexes, searches and makes an approved write against the real server."""

import json
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.generators.conftest import EDIT, EDITED, QUERY, SERVICE_KEY, SPEC, SPENT_KEY, WORKSPACE

TS = Path(__file__).resolve().parent / "ts"
NODE = shutil.which("node")


def node(*args: str, cwd: Path, env: dict[str, str] | None = None) -> str:
    """Run node; its stdout and stderr together, which the caller asserts on."""
    assert NODE is not None
    run = subprocess.run(
        [NODE, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300, check=False
    )
    assert run.returncode == 0, run.stdout + run.stderr
    return run.stdout + run.stderr


@pytest.fixture(scope="module")
def typed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A folder with schema.ts (types only) generated from openapi.yaml beside flow.mjs, tsconfig.json and the
    pinned node_modules; asserts the generator said nothing."""
    if NODE is None:
        pytest.skip("node is not installed: the TypeScript generator check needs node 20 or later")
    version = node("--version", cwd=TS).strip()
    if int(version.lstrip("v").split(".")[0]) < 20:
        pytest.skip(f"node {version} is older than 20, which the TypeScript generator check needs")
    modules = TS / "node_modules"
    assert (modules / ".package-lock.json").is_file(), f"no {modules}: run scripts/install-dev (npm ci there)"
    work = tmp_path_factory.mktemp("typescript")
    for name in ("flow.mjs", "tsconfig.json"):
        shutil.copy(TS / name, work / name)
    (work / "node_modules").symlink_to(modules)
    assert node(str(TS / "generate.mjs"), str(SPEC), "schema.ts", cwd=work) == ""
    yield work


def test_the_generator_cli_reads_the_spec_without_a_warning(typed: Path) -> None:
    output = node("node_modules/openapi-typescript/bin/cli.js", str(SPEC), "-o", "cli.ts", cwd=typed)
    assert re.fullmatch(r"✨ openapi-typescript 7\.13\.0\n🚀 \S+ → cli\.ts \[[\d.]+m?s\]\n", output), output


def test_the_generated_types_check_the_script(typed: Path) -> None:
    assert node("node_modules/typescript/bin/tsc", "-p", "tsconfig.json", cwd=typed) == ""


def test_the_script_syncs_indexes_searches_and_writes(typed: Path, server_url: str, tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    for path, data in WORKSPACE.items():
        (workspace / path).parent.mkdir(parents=True, exist_ok=True)
        (workspace / path).write_bytes(data)
    env = os.environ | {
        "REACTSTEP_SERVER": server_url,
        "REACTSTEP_CLIENT_API_KEY": SERVICE_KEY,
        "REACTSTEP_SPENT_KEY": SPENT_KEY,
    }
    report = json.loads(node("flow.mjs", str(workspace), "ts-plugin", QUERY, cwd=typed, env=env))
    assert report == {
        "readiness": {"status": "ready", "checks": {"storage": "ok", "llm": "ok"}},
        "without_key": [401, "unauthorized"],
        "spec": SPEC.read_text(),
        "uploaded": sorted(WORKSPACE),
        "index_events": ["progress", "result"],
        "indexed_files": len(WORKSPACE),
        "index_stop": [200, False, "ready"],
        "found": True,
        "proposed": {"tool_name": "replace_in_file", "tool_args": EDIT, "requires_approval": True},
        "diff": ["-    return text.upper()", "+    return text.upper() + '!'"],
        "written": "Wrote src/util/strings.py (+1 -1 lines).",
        "background": ["step", ["thought", "result"]],
        "answer": ["final_answer", "shout() now ends with '!'."],
        "budget": {"priced": False, "counted": True},  # openai/scripted has no price: tokens only
        "over_budget": [429, "budget_exhausted", True],
        "after": EDITED.decode(),
    }
