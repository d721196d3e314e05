"""The contract is pydantic and the standard library: importing every module of it loads nothing else."""

import subprocess
import sys

MODULES = (
    "actions",
    "common",
    "errors",
    "health",
    "history",
    "indexing",
    "llm_config",
    "manifest",
    "mcp",
    "projects",
    "prompt_fit",
    "step",
    "step_report",
    "sync",
)
SCRIPT = f"""
import sys
{"".join(f"import reactstep.contract.{name}" + chr(10) for name in MODULES)}
print("\\n".join(sorted(name.split(".")[0] for name in sys.modules)))
"""
# pydantic and what it brings, and our namespace (its modules are checked apart)
ALLOWED = {
    "pydantic",
    "pydantic_core",
    "typing_extensions",
    "typing_inspection",
    "annotated_types",
    "reactstep",
}


def test_the_contract_loads_only_pydantic() -> None:
    loaded = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, check=True
    ).stdout.split()
    outside = {name for name in loaded if name not in sys.stdlib_module_names and not name.startswith("_")}
    assert outside - ALLOWED == set()
    ours = subprocess.run(
        [sys.executable, "-c", SCRIPT.replace('name.split(".")[0]', "name")],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert {name for name in ours if name.startswith("reactstep.")} == {
        "reactstep.contract",
        *(f"reactstep.contract.{name}" for name in MODULES),
    }
