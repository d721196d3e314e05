"""Tool-side failures.

ToolError           the model can fix it: becomes an observation with is_error true
└── UnsafePath      a path that would leave the project
StoreUnavailable    the object store itself failed: the service answers 503
"""


class ToolError(Exception):
    """A failure the model can read and recover from."""


class UnsafePath(ToolError):
    """A path from the model that is not a plain relative path inside the project."""


class StoreUnavailable(Exception):
    """The object store could not be reached or answered with a server error."""
