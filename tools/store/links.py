"""Whether a path inside a project passes through a symbolic link, by lstat of each of its parts.

The local store follows no link out of a project: a path with none on its way is read as it stands
(its lexical path is its real path); any other is resolved in full and refused if it leads outside.
"""

import os
from pathlib import Path
from stat import S_ISLNK


def has_link(base: Path, clean: str) -> bool:
    """Whether the project directory or any existing part of `clean` below it is a symbolic link."""
    return _walk_lstat(base, clean) is _LINK


def link_free_stat(base: Path, clean: str) -> os.stat_result | None:
    """The lstat of base/clean when it exists and nothing from the project directory down is a link."""
    found = _walk_lstat(base, clean)
    return found if isinstance(found, os.stat_result) else None


_LINK = object()  # _walk_lstat met a link (or an error the full resolution should report)


def _walk_lstat(base: Path, clean: str) -> os.stat_result | object | None:
    """lstat the project directory and each part of `clean` in turn: the last one's result, _LINK
    at the first link, None at the first missing part (nothing below it exists, links included)."""
    paths = [str(base)]
    for part in clean.split("/") if clean else []:
        paths.append(f"{paths[-1]}/{part}")
    found = None
    for path in paths:
        try:
            found = os.lstat(path)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError:
            return _LINK
        if S_ISLNK(found.st_mode):
            return _LINK
    return found
