"""JsonFormatter's spliced line (a head encoded once, the fields alone) is the line of the whole entry
encoded at once, byte for byte, whatever the fields hold."""

import datetime
import json
import math
from typing import Any

import pytest

from reactstep.service.logs.lines import JsonFormatter, _timestamp

CREATED = 1_764_000_000.123456


def whole_entry(request_id: str | None, fields: dict[str, Any], message: str = "request") -> str:
    """The line as one encode of the entry (the formatter's path for records with a traceback)."""
    entry: dict[str, Any] = {
        "ts": _timestamp(CREATED),
        "level": "info",
        "logger": "reactstep.http",
        "message": message,
        "request_id": request_id,
    }
    entry.update(fields)
    return json.dumps(entry, ensure_ascii=False, separators=(",", ":"), default=str)


@pytest.mark.parametrize(
    "fields",
    [
        {},
        {"method": "POST", "route": "/api/agent/execute_action", "status": 200, "duration_ms": 0.532},
        {"project": "naïve-プロジェクト", "error": None, "is_error": False, "tool_ms": 1e-07, "n": 10**20},
        {"quote": 'a "b" \\ c\n\t\x00\u2028', "nested": {"a": [1, 2.5, None, True]}, "tuple": (1, "x")},
        {"when": datetime.date(2026, 11, 25), "nan": math.nan, "inf": -math.inf},
        {"status": 200, "message": "a field may shadow the head"},  # the whole entry, then
        {"request_id": "other", "ts": "x"},
    ],
)
@pytest.mark.parametrize("request_id", ["0123456789abcdef", None, 'odd "id"'])
def test_the_spliced_line_is_the_whole_entry(fields: dict[str, Any], request_id: str | None) -> None:
    formatter = JsonFormatter()
    for message in ("request", "request", "another message"):  # the head is made once, then kept
        line = formatter.line(CREATED, "INFO", "reactstep.http", message, request_id, fields)
        assert line == whole_entry(request_id, fields, message)
