"""RE2, the one regex engine for patterns from the model: linear time, so no pattern can hang a worker."""

from typing import Any

import re2  # type: ignore[import-untyped]

from reactstep.tools.errors import InvalidRegex


def compile_re2(
    pattern: str, *, case_sensitive: bool = True, never_capture: bool = False, multiline: bool = False
) -> Any:
    """The compiled pattern (`multiline`: ^ and $ at every line), or InvalidRegex saying why not."""
    options = re2.Options()
    options.log_errors = False  # a bad pattern is the model's to fix, not a log line
    options.case_sensitive = case_sensitive
    options.never_capture = never_capture
    source = f"(?m){pattern}" if multiline else pattern
    try:
        return re2.compile(source, options)
    except re2.error as exc:
        reason = exc.args[0] if exc.args else ""
        if isinstance(reason, bytes):
            reason = reason.decode("utf-8", errors="replace")
        raise InvalidRegex(str(reason).replace(source, pattern)) from exc  # RE2 quotes what it compiled
