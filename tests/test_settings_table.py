"""Docs that cannot drift: docs/configuration.md's settings tables are the settings model's, and every
REACTSTEP_ variable the docs, the contract and the scripts name is a setting."""

import re
import sys
from pathlib import Path

import pytest

from reactstep.client import settings as client_settings
from reactstep.service.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
try:
    from settings_table import BEGIN, END, TO_KNOW, settings_table, with_table  # type: ignore[import-not-found]
finally:
    sys.path.remove(str(ROOT / "scripts"))
NAMED_IN = [
    "README.md",
    "docs/*.md",
    "openapi.yaml",
    "scripts/*",
    "bench/*.py",
    "Dockerfile",
    "compose.yaml",
    ".ci/*",
]
VARIABLE = re.compile(r"\bREACTSTEP_[A-Z0-9_]*[A-Z0-9]\b")
# The prefix itself, as prose names it, and the client's own variables (client/settings.py names them).
NOT_SETTINGS = {"REACTSTEP_", *VARIABLE.findall(client_settings.__doc__ or "")}
NOT_SETTINGS.add("REACTSTEP_WHEEL_CACHE")  # where scripts/llama_wheel keeps what it built; the script's own
# CHANGELOG.md is left out: history names settings that are gone.


def test_the_configuration_page_holds_the_tables_the_model_makes() -> None:
    page = (ROOT / "docs" / "configuration.md").read_text()
    assert with_table(page) == page, "run .venv/bin/python scripts/settings_table.py"


def test_the_table_has_one_row_per_setting_with_a_meaning() -> None:
    rows = [line for line in settings_table().splitlines() if line.startswith("| `REACTSTEP_")]
    assert sorted(rows) == sorted(set(rows))
    assert len(rows) == len(Settings.model_fields)
    assert all(not row.endswith("|  |") for row in rows)
    assert all(field.description for field in Settings.model_fields.values())


def test_the_markers_are_required() -> None:
    with pytest.raises(ValueError, match="the page lacks the markers"):
        with_table(f"# readme\n{BEGIN}\n")
    assert with_table(f"a\n{BEGIN}\nold\n{END}\nb") == f"a\n{BEGIN}\n{settings_table()}\n{END}\nb"


def test_every_variable_the_docs_name_is_a_setting() -> None:
    settings = {f"REACTSTEP_{name.upper()}" for name in Settings.model_fields}
    unknown = {
        f"{path.relative_to(ROOT)}: {name}"
        for pattern in NAMED_IN
        for path in ROOT.glob(pattern)
        if path.is_file()
        for name in VARIABLE.findall(path.read_text(errors="replace"))
        if name not in settings | NOT_SETTINGS
    }
    assert sorted(unknown) == []


def test_at_most_twenty_settings_to_know_each_a_setting_once() -> None:
    known = [name for names in TO_KNOW.values() for name in names]
    assert len(known) == len(set(known)) <= 20
    assert set(known) <= set(Settings.model_fields)
