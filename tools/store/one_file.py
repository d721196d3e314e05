"""A store view holding one file's bytes, already read: a one-file tool runs over it on the event loop.

OneFile(project_id, path, data).get(project_id, path) returns `data`; any other call raises NotRead,
which no tool catches (it is not a ToolError), so the caller runs the call again on the real store.
"""

from typing import NoReturn

from reactstep.tools.store.paths import normalize_path


class NotRead(Exception):
    """The tool asked the view for something other than the file it holds."""


class OneFile:
    """One project file's bytes, as a store that has nothing else."""

    local = False

    def __init__(self, project_id: str, path: str, data: bytes) -> None:
        self._project_id = project_id
        self._path = normalize_path(path)
        self._data = data

    def get(self, project_id: str, path: str) -> bytes:
        """The held bytes, for the held file only."""
        if project_id != self._project_id or normalize_path(path) != self._path:
            raise NotRead(path)
        return self._data

    def __getattr__(self, name: str) -> NoReturn:
        raise NotRead(name)
