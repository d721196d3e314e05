"""Named points inside a change, where an operator's hook may run (nothing runs by default).

A change of a file passes these points in this order (versioned.py and journal.py):

    write.lease-taken      the path's lease holds the intent (new bytes' sha256, origin)
    write.blob-kept        the new bytes are stored as blob-<sha256>
    write.file-written     the file holds the new bytes (or is deleted)
    journal.entry-written  change-<version>.json exists; the head does not name it yet
    write.journaled        the head names the change
    write.history-saved    the path's history lists the change; the lease is given back next

A process may die at any of them; the next writer of the path (or a read of its versions) finishes
what it left (recovery.py). Hooks make that testable with real processes: a launcher registers a
hook that kills its own process at one point.
"""

from collections.abc import Callable

POINTS = (
    "write.lease-taken",
    "write.blob-kept",
    "write.file-written",
    "journal.entry-written",
    "write.journaled",
    "write.history-saved",
)

_hooks: list[Callable[[str], None]] = []


def on_point(hook: Callable[[str], None]) -> None:
    """Call `hook(point)` each time a change passes a named point, in this process."""
    _hooks.append(hook)


def off_point(hook: Callable[[str], None]) -> None:
    """Stop calling `hook`."""
    _hooks.remove(hook)


def reached(point: str) -> None:
    """A change passed `point`: run the hooks."""
    for hook in _hooks:
        hook(point)
