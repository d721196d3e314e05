"""Rewrite docs/configuration.md's settings tables from the settings model (`--check`: exit 1 when stale).

The tables go between the two markers, so the page and the model cannot drift apart. The settings a
person deploying reactstep needs are grouped first (TO_KNOW); every other setting is in one "advanced"
table, in the model's order.
"""

import sys
from pathlib import Path
from typing import Any

from generated_page import write_or_check
from pydantic import SecretStr
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from reactstep.service.settings import Settings

PAGE = Path(__file__).resolve().parent.parent / "docs" / "configuration.md"

BEGIN = "<!-- settings table: made by scripts/settings_table.py from service/settings.py; do not edit -->"
END = "<!-- end of the settings table -->"

TO_KNOW: dict[str, list[str]] = {
    "The model": ["llm_model", "llm_api_base", "llm_api_key"],
    "Serving": ["host", "port", "data_dir"],
    "Keys": ["api_keys", "approval_secret"],
    "Storage": [
        "storage_backend",
        "s3_bucket",
        "s3_endpoint_url",
        "s3_access_key_id",
        "s3_secret_access_key",
    ],
    "Vectors and embeddings": ["vector_backend", "qdrant_url", "qdrant_api_key", "embedding_model"],
    "Limits, logs and browsers": ["file_max_bytes", "log_level", "cors_origins"],
}
HEADER = ["| variable | default | meaning |", "|---|---|---|"]


def settings_table() -> str:
    """The settings to know by group, then the rest in the model's order: variable, default, meaning."""
    known = {name for names in TO_KNOW.values() for name in names}
    parts = []
    for group, names in TO_KNOW.items():
        parts += [f"### {group}", "", *HEADER, *(_row(name) for name in names), ""]
    rest = [_row(name) for name in Settings.model_fields if name not in known]
    parts += ["### Advanced", "", *HEADER, *rest]
    return "\n".join(parts)


def with_table(page: str) -> str:
    """The page's text with the tables between the markers replaced by the current ones."""
    head, found, rest = page.partition(BEGIN)
    _, found_end, tail = rest.partition(END)
    if not (found and found_end):
        raise ValueError(f"the page lacks the markers {BEGIN!r} and {END!r}")
    return f"{head}{BEGIN}\n{settings_table()}\n{END}{tail}"


def _row(name: str) -> str:
    field = Settings.model_fields[name]
    meaning = (field.description or "").replace("|", "\\|")
    return f"| `REACTSTEP_{name.upper()}` | {_default(field)} | {meaning} |"


def _default(field: FieldInfo) -> str:
    value: Any = field.get_default(call_default_factory=True)
    if value is PydanticUndefined or value is None:
        return "none"
    if isinstance(value, SecretStr):
        return "(secret)"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, list):
        return ", ".join(f"`{item}`" for item in value) if value else "`[]`"
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, Path):
        value = value if value.is_absolute() else f"./{value}"
    return f"`{value}`"


def main() -> int:
    return write_or_check(PAGE, with_table(PAGE.read_text()), "scripts/settings_table.py")


if __name__ == "__main__":
    sys.exit(main())
