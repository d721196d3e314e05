"""Two distinct files never become one: a new path may not be a twin of an existing one.

Twins differ only by case or Unicode normalisation (README.md / readme.md): a client on a
case-insensitive disk (macOS, Windows) would keep one of them and lose the other. Only a path
that does not exist yet is checked, so a PUT over an existing file costs nothing here.

The project's names (by fold key) are listed once and then kept per store and project at the
journal version they describe; the next check moves them forward over the journal's changes
since (one small read per change), so 2,000 new files uploaded one after another list the project
once, not 2,000 times. Any doubt (another incarnation of the project, a version gone backwards,
more than CATCH_UP_MAX changes to replay) lists it again.
"""

import threading
from dataclasses import dataclass, field
from weakref import WeakKeyDictionary

from reactstep.service.errors import Conflict
from reactstep.service.runtime import Runtime
from reactstep.tools.store.objects import ObjectStore
from reactstep.tools.store.paths import fold_key

CATCH_UP_MAX = 64  # more journal changes than this since the kept names: list the project again


@dataclass
class _Names:
    """A project's paths by fold key, as they stood at `version` of the incarnation `created`."""

    created: float
    version: int
    by_key: dict[str, str] = field(default_factory=dict)


_KEPT: "WeakKeyDictionary[ObjectStore, dict[str, _Names]]" = WeakKeyDictionary()
_LOCK = threading.Lock()


def refuse_twin(project_id: str, path: str, runtime: Runtime) -> None:
    """409 name_collision naming the project's existing twin of the new `path`, if it has one."""
    existing = _names(project_id, runtime).by_key.get(fold_key(path))
    if existing is not None and existing != path:
        raise Conflict(
            f"{path!r} differs from the existing {existing!r} only by case or Unicode normalisation "
            f"(one file on a case-insensitive disk); nothing was written; write {existing!r}, or "
            "delete it first to rename it",
            code="name_collision",
        )


def _names(project_id: str, runtime: Runtime) -> _Names:
    """The project's names now: the kept ones moved forward over the journal, or a fresh listing."""
    head = runtime.projects.head(project_id)
    with _LOCK:
        kept = _KEPT.setdefault(runtime.store, {}).get(project_id)
    usable = (
        kept is not None
        and kept.created == head.created
        and kept.version <= head.version <= kept.version + CATCH_UP_MAX
    )
    if kept is None or not usable:
        names = _Names(head.created, head.version)
        for info in runtime.store.list(project_id):
            names.by_key.setdefault(fold_key(info.path), info.path)
    else:
        names = _Names(kept.created, head.version, dict(kept.by_key))
        for version in range(kept.version + 1, head.version + 1):
            change = runtime.projects.change(project_id, version)
            key = fold_key(change.path)
            if change.sha256 is None:
                if names.by_key.get(key) == change.path:
                    del names.by_key[key]
            else:
                names.by_key.setdefault(key, change.path)
    with _LOCK:
        _KEPT[runtime.store][project_id] = names
    return names
