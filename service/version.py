"""What this server is: its package version, the commit it was built from when known, its API version.

commit: the HEAD of the git checkout the code runs from (an editable install), else None; read once,
from git's own files (no git process).
"""

import re
from functools import cache
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import yaml

SOURCE_ROOT = Path(__file__).resolve().parents[1]
OPENAPI_PATH = Path(__file__).parent / "openapi.yaml"  # a link to the top level's, copied into a wheel
_COMMIT = re.compile(r"[0-9a-f]{40}")


@cache
def package_version() -> str:
    """The installed reactstep's version ("unknown" when it runs from a bare source tree)."""
    try:
        return version("reactstep")
    except PackageNotFoundError:
        return "unknown"


@cache
def api_version() -> str:
    """The version of the HTTP contract, as openapi.yaml's info names it."""
    spec = yaml.safe_load(OPENAPI_PATH.read_text())
    return str(spec["info"]["version"])


@cache
def commit() -> str | None:
    """The git commit the code runs from, when known."""
    return _checkout_head(SOURCE_ROOT / ".git")


def _checkout_head(git: Path) -> str | None:
    try:
        head = (git / "HEAD").read_text().strip()
        if _COMMIT.fullmatch(head):  # a detached HEAD
            return head
        ref = head.removeprefix("ref: ")
        if (loose := git / ref).is_file():
            return _commit_or_none(loose.read_text().strip())
        for line in (git / "packed-refs").read_text().splitlines():
            sha, _, name = line.partition(" ")
            if name == ref:
                return _commit_or_none(sha)
    except OSError:
        return None
    return None


def _commit_or_none(text: str) -> str | None:
    return text if _COMMIT.fullmatch(text) else None
