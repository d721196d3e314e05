"""openapi.yaml's `components: schemas:` is what scripts/openapi.py makes of the contract's models."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_schemas_are_generated_from_the_models() -> None:
    check = subprocess.run(
        [sys.executable, "scripts/openapi.py", "--check"], cwd=ROOT, capture_output=True, text=True
    )
    assert check.returncode == 0, check.stdout + check.stderr


def test_the_generated_section_is_the_one_between_schemas_and_responses() -> None:
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import openapi  # type: ignore[import-not-found]
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    spec = "openapi: 3.1.0\ncomponents:\n  schemas:\n    Old: {}\n  responses:\n    Kept: {}\n"
    spliced = openapi.spliced(spec)
    assert spliced.startswith("openapi: 3.1.0\ncomponents:\n  schemas:\n    ProjectId:\n")
    assert spliced.endswith("\n  responses:\n    Kept: {}\n")
    assert "Old" not in spliced
    assert openapi.spliced(spliced) == spliced
