"""The docs site builds with warnings as errors (a broken link, an anchor that is not there, a page missing
from nav), its generated tables match what they are made from, and the README stays a short front door."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MKDOCS = Path(sys.executable).parent / "mkdocs"
USER_FACING = [ROOT / "README.md", *sorted((ROOT / "docs").glob("**/*.md"))]
# History belongs in CHANGELOG.md and git log, not in what a user reads.
HISTORY = re.compile(
    r"\b(issue|pass)\s+#?\d+|\b(first|second|third|fourth|fifth|sixth)\s+pass\b", re.IGNORECASE
)


def test_the_site_builds_strict(tmp_path: Path) -> None:
    built = subprocess.run(
        [
            str(MKDOCS),
            "build",
            "--strict",
            "--config-file",
            str(ROOT / "mkdocs.yml"),
            "--site-dir",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert built.returncode == 0, built.stderr
    assert "WARNING" not in built.stderr
    pages = {path.relative_to(ROOT / "docs").with_suffix("") for path in (ROOT / "docs").glob("**/*.md")}
    assert all(
        (tmp_path / ("" if page.name == "index" else str(page)) / "index.html").is_file() for page in pages
    )


@pytest.mark.parametrize("script", ["scripts/api_table.py", "scripts/settings_table.py", "scripts/layout.py"])
def test_the_generated_tables_are_current(script: str) -> None:
    checked = subprocess.run(
        [sys.executable, str(ROOT / script), "--check"], capture_output=True, text=True, timeout=60
    )
    assert (checked.returncode, checked.stdout) == (0, "")


def test_the_readme_is_a_short_front_door() -> None:
    lines = (ROOT / "README.md").read_text().splitlines()
    assert len(lines) <= 200
    assert [number for number, line in enumerate(lines, 1) if len(line) > 110] == []


@pytest.mark.parametrize("page", USER_FACING, ids=lambda page: str(page.relative_to(ROOT)))
def test_no_page_tells_history(page: Path) -> None:
    assert [match.group(0) for match in HISTORY.finditer(page.read_text())] == []
