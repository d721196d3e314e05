"""Tool-side failures.

ToolError           the model can fix it: becomes an observation with is_error true
├── UnsafePath      a path that would leave the project
├── StaleFile       a conditional write found the file changed since its preview
├── WriteBusy       another writer held the file for longer than a write may wait
├── ApprovalRefused an approval token that is altered, expired or for another call
└── ProjectNotFound a project id that names no project (the service answers 404)
StoreUnavailable    the object store itself failed: the service answers 503
"""


class ToolError(Exception):
    """A failure the model can read and recover from."""


class UnsafePath(ToolError):
    """A path from the model that is not a plain relative path inside the project."""


class StaleFile(ToolError):
    """A conditional write found the file other than the preview saw it; nothing was written."""

    def __init__(self, path: str) -> None:
        super().__init__(
            f"{path} changed since the preview, so nothing was written. Propose the change again "
            "to get a fresh preview for the user to approve."
        )
        self.path = path


class WriteBusy(ToolError):
    """Another request kept writing the file for longer than a write waits; nothing was written."""

    def __init__(self, path: str) -> None:
        super().__init__(f"another write to {path} is in progress, so nothing was written; try again")
        self.path = path


class VersionNotKept(ToolError):
    """A version of a file whose bytes are not kept: past the retention window, or never kept."""

    def __init__(self, path: str, version: int) -> None:
        super().__init__(f"version {version} of {path} is not kept (past the retention window)")
        self.path = path
        self.version = version


class ApprovalRefused(ToolError):
    """An approval token that is altered, expired or issued for another call; nothing was written."""


class StoreUnavailable(Exception):
    """The object store could not be reached or answered with a server error."""


class ProjectNotFound(ToolError):
    """A project id that names no project: never created, or deleted."""

    def __init__(self, project_id: str) -> None:
        super().__init__(
            f"project {project_id!r} does not exist; create it with PUT /api/projects/{project_id}"
        )
        self.project_id = project_id
