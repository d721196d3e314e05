"""The README's settings table, made from the settings model so that the two cannot drift apart.

`scripts/settings_table.py` writes it between the two markers; a test fails when README differs.
"""

from pathlib import Path
from typing import Any

from pydantic import SecretStr
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from reactstep.service.settings import Settings

BEGIN = "<!-- settings table: made by scripts/settings_table.py from service/settings.py; do not edit -->"
END = "<!-- end of the settings table -->"


def settings_table() -> str:
    """One row per setting, in the model's order: variable, default, meaning."""
    rows = ["| variable | default | meaning |", "|---|---|---|"]
    for name, field in Settings.model_fields.items():
        meaning = (field.description or "").replace("|", "\\|")
        rows.append(f"| `REACTSTEP_{name.upper()}` | {_default(field)} | {meaning} |")
    return "\n".join(rows)


def with_table(readme: str) -> str:
    """README text with the table between the markers replaced by the current one."""
    head, found, rest = readme.partition(BEGIN)
    _, found_end, tail = rest.partition(END)
    if not (found and found_end):
        raise ValueError(f"README lacks the markers {BEGIN!r} and {END!r}")
    return f"{head}{BEGIN}\n{settings_table()}\n{END}{tail}"


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
