"""`Client`: the blocking client of a reactstep server. Each method runs one operation (operations.py,
agent/runs.py) over one httpx connection pool; AsyncClient (async_client.py) runs the same operations.

    with Client("http://127.0.0.1:8000", api_key=...) as rs:
        rs.projects.create("demo"); rs.projects.sync_folder("demo", "./src")
        result = rs.run("where is the retry logic?", project="demo", approve=lambda a: True)
"""

from collections.abc import Callable, Iterator, Mapping
from contextlib import closing
from os import PathLike
from pathlib import Path
from typing import Any, TypeVar, Unpack

import httpx
from pydantic import BaseModel

from reactstep.client.agent.loop import RunResult
from reactstep.client.api import operations
from reactstep.client.api.calls import Op, drive
from reactstep.client.api.retries import RetryPolicy
from reactstep.client.api.transport import SyncTransport, http_options
from reactstep.client.api.wire import (
    Changes,
    ExecuteActionResponse,
    IndexProgress,
    IndexResult,
    ProjectReport,
    ReactStepResponse,
    StepEvent,
    StoredFile,
    step_event,
)
from reactstep.client.runs import RunOptions, run
from reactstep.client.workspace.pull import PullReport, pull_folder
from reactstep.client.workspace.sync import Progress, SyncOptions, SyncReport, sync_folder

T = TypeVar("T")
Request = BaseModel | Mapping[str, Any]


class Client:
    """A reactstep server's routes as methods; errors raised as errors.py's tree; 429/503 retried."""

    def __init__(
        self,
        base_url: str,
        api_key: str | None = None,
        *,
        timeout_s: float = 300.0,
        retry: RetryPolicy | None = None,
        http: httpx.Client | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self._http = http or httpx.Client(**http_options(base_url, api_key, timeout_s))
        self._transport = SyncTransport(self._http, retry or RetryPolicy())
        self.projects = Projects(self)

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection pool."""
        self._http.close()

    def do(self, op: Op[T]) -> T:
        """Run one operation of operations.py (or any generator of Calls) with this client."""
        return drive(op, self._transport)

    def step(self, request: Request) -> ReactStepResponse:
        """POST /api/agent/react_step: one reasoning step (a ReactStepRequest, or its fields)."""
        return self.do(operations.step(request))

    def stream_step(self, request: Request) -> Iterator[StepEvent]:
        """The step as typed events: ThoughtEvent deltas, then one StepResult (StreamError on `error`)."""
        with closing(self._transport.events(operations.stream_call(request))) as events:
            for name, data in events:
                yield step_event(name, data)

    def execute(self, request: Request) -> ExecuteActionResponse:
        """POST /api/agent/execute_action: one server tool call (an ExecuteActionRequest, or its fields)."""
        return self.do(operations.execute(request))

    def run(self, query: str, **options: Unpack[RunOptions]) -> RunResult:
        """The reference loop until a final answer (agent/runs.py's RunOptions: project, tools, on_action,
        approve, max_steps, trace, ...)."""
        return self.do(run(query, **options))


class Projects:
    """The project routes: files in, index, changes out."""

    def __init__(self, client: Client) -> None:
        self._client = client

    def create(self, project_id: str) -> ProjectReport:
        """PUT the project (no error when it exists)."""
        return self._client.do(operations.create_project(project_id))

    def get(self, project_id: str) -> ProjectReport:
        """GET the project: files, versions, index state."""
        return self._client.do(operations.describe_project(project_id))

    def upload(self, project_id: str, path: str, data: bytes, if_match: str | None = None) -> StoredFile:
        """PUT one file; if_match: the ETag it must have, operations.NEW_FILE, or None (any)."""
        return self._client.do(operations.upload(project_id, path, data, if_match))

    def download(self, project_id: str, path: str) -> tuple[bytes, str] | None:
        """GET one file's bytes and ETag; None when there is no such file."""
        return self._client.do(operations.download(project_id, path))

    def delete_file(self, project_id: str, path: str) -> None:
        """DELETE one file (gone already: no error)."""
        return self._client.do(operations.delete_file(project_id, path))

    def index(
        self, project_id: str, on_progress: Callable[[IndexProgress], Any] | None = None
    ) -> IndexResult:
        """POST .../index; each progress event to on_progress as it comes."""
        return self._client.do(operations.index(project_id, on_progress))

    def changes(self, project_id: str, since: int = 0) -> Changes:
        """Every change after version `since`, and the project's version."""
        return self._client.do(operations.changes(project_id, since))

    def sync_folder(
        self,
        project_id: str,
        folder: str | PathLike[str],
        options: SyncOptions | None = None,
        on_upload: Progress | None = None,
        on_index: Progress | None = None,
    ) -> SyncReport:
        """Make the project hold exactly the folder's files (only changed files travel); SyncRefused
        when that would revert a tool's write the folder has not seen (options: force, keep_both)."""
        op = sync_folder(
            project_id, Path(folder), self._client.base_url, options or SyncOptions(), on_upload, on_index
        )
        return self._client.do(op)

    def pull(
        self,
        project_id: str,
        folder: str | PathLike[str],
        force: bool = False,
        on_file: Progress | None = None,
    ) -> PullReport:
        """Write the changes tools made on the server into the folder; PullRefused (nothing written)
        when that would overwrite an edit made there, unless force."""
        return self._client.do(pull_folder(project_id, Path(folder), self._client.base_url, force, on_file))
