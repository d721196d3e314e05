"""Turn an untrusted path from the model into a clean project-relative key, or refuse it.

A path is text: valid UTF-8 (a str holding surrogates, the way Python carries bytes that are not,
is refused naming those bytes), in Unicode NFC (the canonical form: a macOS client's NFD name is
refused with the NFC form to send), never replaced or merged with another name. Two distinct
paths that a case-insensitive or normalisation-insensitive disk would merge are twins
(fold_key); the service keeps a project free of them.

A path is normalised once, where it enters (a tool's arguments, a request's URL or manifest): the
result is a `ProjectPath`, and the object store takes nothing else, so mypy proves every path that
reaches a disk or a bucket went through `normalize_path` and the store never normalises again.
Paths the store lists, and the journal records, are project paths already.
"""

import posixpath
import re
import unicodedata
from collections.abc import Iterable
from functools import lru_cache
from typing import NewType
from urllib.parse import unquote

from reactstep.contract.common import escaped_bytes
from reactstep.tools.errors import ToolError, UnsafePath

MAX_PATH_CHARS = 1024
MAX_PART_BYTES = 255  # of UTF-8: the longest file or folder name common file systems hold
PATHS_CACHED = 4096
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")

ProjectPath = NewType("ProjectPath", str)
"""A path `normalize_path` returned (or the store listed): relative, POSIX, NFC, no '.' or '..'."""

ROOT = ProjectPath("")


@lru_cache(maxsize=PATHS_CACHED)
def normalize_path(raw: str) -> ProjectPath:
    """Return `raw` as a relative POSIX path without '.' parts ('' is the project root).

    A pure function of its argument, so the answers for recent paths are kept (a refusal is not).
    """
    if len(raw) > MAX_PATH_CHARS:
        raise UnsafePath(f"path is longer than {MAX_PATH_CHARS} characters")
    _refuse_non_text(raw)
    decoded = unquote(unquote(raw))
    for text in (raw, decoded):
        _refuse_forbidden_characters(text)
    if not unicodedata.is_normalized("NFC", raw):
        canonical = unicodedata.normalize("NFC", raw)
        raise UnsafePath(f"path {raw!a} is not in Unicode NFC form; send the NFC form {canonical!r}")
    # Whitespace is part of a name (" a.py" is not "a.py"): only empty and '.' parts go.
    parts = [part for part in raw.split("/") if part not in ("", ".")]
    if raw.startswith("/") or ".." in parts or ".." in decoded.split("/"):
        raise UnsafePath(f"path {raw!r} must be relative to the project root, without '..'")
    if any(len(part.encode()) > MAX_PART_BYTES for part in parts):
        raise UnsafePath(
            f"a part of the path is longer than {MAX_PART_BYTES} bytes, more than a file system holds"
        )
    return ProjectPath(posixpath.join(*parts)) if parts else ROOT


def file_path(raw: str) -> ProjectPath:
    """Normalize a path that must name a file, not the project root."""
    return named_file(normalize_path(raw))


def named_file(path: ProjectPath) -> ProjectPath:
    """`path` itself, refused when it is the project root (nothing can be written or deleted there)."""
    if not path:
        raise ToolError("path is empty; name a file relative to the project root")
    return path


def fold_key(path: str) -> str:
    """What a case-insensitive, normalisation-insensitive disk makes of a path: two paths with one
    key are twins, one file on macOS or Windows."""
    return unicodedata.normalize("NFC", path).casefold()


def twin_in(path: str, others: Iterable[str]) -> str | None:
    """The first of `others` that is a different path with the same fold_key, or None."""
    key = fold_key(path)
    return next((other for other in others if other != path and fold_key(other) == key), None)


def twins(paths: Iterable[str]) -> tuple[str, str] | None:
    """The first two of `paths` (in their order) that are twins, or None."""
    seen: dict[str, str] = {}
    for path in paths:
        first = seen.setdefault(fold_key(path), path)
        if first != path:
            return first, path
    return None


def _refuse_non_text(text: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise UnsafePath(f"path {escaped_bytes(text)} is not valid UTF-8 text; name files in UTF-8") from exc


def _refuse_forbidden_characters(text: str) -> None:
    if "\x00" in text:
        raise UnsafePath("path contains a NUL character")
    if _CONTROL.search(text):
        raise UnsafePath("path contains a control character")
    if "\\" in text:
        raise UnsafePath("path contains a backslash; use '/' between parts")
    if text.startswith(("/", "~")) or (len(text) > 1 and text[1] == ":"):
        raise UnsafePath(f"path {text!r} is absolute; give a path relative to the project root")
