"""What a file path may hold that JSON Schema cannot say, told to schemathesis.

openapi.yaml's path pattern says every path rule but two, which it states in words: a path is in
Unicode NFC, and each part holds at most 255 bytes of UTF-8 (the pattern counts 255 characters).
A valid-looking request refused 422 invalid_path for breaking one of these two is no finding: the
failure is dropped here, and only that one. Loaded through schemathesis.toml's `hooks`.
"""

import unicodedata
from typing import Any

import schemathesis

MAX_PART_BYTES = 255


def unsayable(path: Any) -> bool:
    """Whether the path breaks one of the two rules no pattern can state."""
    if not isinstance(path, str):
        return False
    try:
        longest = max(len(part.encode()) for part in path.split("/"))
    except UnicodeEncodeError:
        return False  # a lone surrogate: the spec's "valid UTF-8", not one of the two
    return longest > MAX_PART_BYTES or not unicodedata.is_normalized("NFC", path)


def paths_of(case: Any) -> list[Any]:
    """The file paths a request names: a /files/{path} URL's, a sync manifest's."""
    files = case.body.get("files") if isinstance(case.body, dict) else None
    return [(case.path_parameters or {}).get("path"), *(files if isinstance(files, dict) else [])]


@schemathesis.hook
def filter_failure(context: Any, failure: Any, case: Any, response: Any) -> bool:
    """Keep every failure but a 422 invalid_path for a path that breaks an unsayable rule."""
    refused_path = response.status_code == 422 and b'"invalid_path"' in response.content
    return not (refused_path and any(unsayable(path) for path in paths_of(case)))
