"""Turn an untrusted path from the model into a clean project-relative key, or refuse it."""

import posixpath
import re
from functools import lru_cache
from urllib.parse import unquote

from reactstep.tools.errors import UnsafePath

MAX_PATH_CHARS = 1024
PATHS_CACHED = 4096
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


@lru_cache(maxsize=PATHS_CACHED)
def normalize_path(raw: str) -> str:
    """Return `raw` as a relative POSIX path without '.' parts ('' is the project root).

    A pure function of its argument, so the answers for recent paths are kept (a refusal is not).
    """
    if len(raw) > MAX_PATH_CHARS:
        raise UnsafePath(f"path is longer than {MAX_PATH_CHARS} characters")
    decoded = unquote(unquote(raw))
    for text in (raw, decoded):
        _refuse_forbidden_characters(text)
    parts = [part for part in raw.strip().split("/") if part not in ("", ".")]
    if raw.startswith("/") or ".." in parts or ".." in decoded.split("/"):
        raise UnsafePath(f"path {raw!r} must be relative to the project root, without '..'")
    return posixpath.join(*parts) if parts else ""


def _refuse_forbidden_characters(text: str) -> None:
    if "\x00" in text:
        raise UnsafePath("path contains a NUL character")
    if _CONTROL.search(text):
        raise UnsafePath("path contains a control character")
    if "\\" in text:
        raise UnsafePath("path contains a backslash; use '/' between parts")
    if text.startswith(("/", "~")) or (len(text) > 1 and text[1] == ":"):
        raise UnsafePath(f"path {text!r} is absolute; give a path relative to the project root")
