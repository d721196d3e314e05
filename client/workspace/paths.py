"""Whether the server takes a file's name as it is: the client's copy of the rules of the server's path
check (tools/store/paths.py), so a sync counts the names it would refuse instead of sending them. The
server stays the judge; a name that passes here and not there is refused with its reason.

A name is taken when it is at most 1,024 characters of UTF-8 text in Unicode NFC, relative (no leading
'/', '~' or drive letter), without '..', empty or '.' parts, control characters or backslashes, and
stays so once percent-decoded (twice).
"""

import re
import unicodedata
from urllib.parse import unquote

MAX_PATH_CHARS = 1024
_CONTROL = r"[\x00-\x1f\x7f\\]"  # compiled at its first use (re caches it), not at import


def path_problem(path: str) -> str | None:
    """Why the server would refuse the project path `path` (a POSIX relative path), or None."""
    if len(path) > MAX_PATH_CHARS:
        return f"longer than {MAX_PATH_CHARS} characters"
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return "not valid UTF-8 text"
    decoded = unquote(unquote(path))
    for text in (path, decoded):
        if re.search(_CONTROL, text):
            return "a control character or a backslash"
        if text.startswith(("/", "~")) or (len(text) > 1 and text[1] == ":"):
            return "absolute"
        if ".." in text.split("/"):
            return "'..' in it"
    if not unicodedata.is_normalized("NFC", path):
        return "not in Unicode NFC form"
    if any(part in ("", ".") for part in path.split("/")):
        return "an empty or '.' part"
    return None
