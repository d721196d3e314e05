"""`AsyncClient`: Client's twin for asyncio. The same operations (operations.py, agent/runs.py,
workspace/sync.py, workspace/pull.py), awaited over an httpx.AsyncClient; a callback given to it may be
async (it is awaited).

    async with AsyncClient("http://127.0.0.1:8000", api_key=...) as rs:
        await rs.projects.sync_folder("demo", "./src")
        result = await rs.run("where is the retry logic?", project="demo")

sync_folder and pull read and write the folder's files on the event loop's thread (small files,
one at a time); everything that waits on the network is awaited.
"""

from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import aclosing
from os import PathLike
from pathlib import Path
from typing import Any, TypeVar, Unpack

import httpx
from pydantic import BaseModel

from reactstep.client.agent.loop import RunResult
from reactstep.client.api import operations
from reactstep.client.api.calls import Op, drive_async
from reactstep.client.api.retries import RetryPolicy
from reactstep.client.api.transport import AsyncTransport, http_options
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


class AsyncClient:
    """A reactstep server's routes as coroutines; errors and retries as Client's."""

    def __init__(
        self,
        base_url: str,
        api_key: str | None = None,
        *,
        timeout_s: float = 300.0,
        retry: RetryPolicy | None = None,
        http: httpx.AsyncClient | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self._http = http or httpx.AsyncClient(**http_options(base_url, api_key, timeout_s))
        self._transport = AsyncTransport(self._http, retry or RetryPolicy())
        self.projects = AsyncProjects(self)

    async def __aenter__(self) -> "AsyncClient":
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the connection pool."""
        await self._http.aclose()

    async def do(self, op: Op[T]) -> T:
        """Run one operation of operations.py (or any generator of Calls) with this client."""
        return await drive_async(op, self._transport)

    async def step(self, request: Request) -> ReactStepResponse:
        """POST /api/agent/react_step: one reasoning step (a ReactStepRequest, or its fields)."""
        return await self.do(operations.step(request))

    async def stream_step(self, request: Request) -> AsyncIterator[StepEvent]:
        """The step as typed events: ThoughtEvent deltas, then one StepResult (StreamError on `error`)."""
        async with aclosing(self._transport.events(operations.stream_call(request))) as events:
            async for name, data in events:
                yield step_event(name, data)

    async def execute(self, request: Request) -> ExecuteActionResponse:
        """POST /api/agent/execute_action: one server tool call (an ExecuteActionRequest, or its fields)."""
        return await self.do(operations.execute(request))

    async def run(self, query: str, **options: Unpack[RunOptions]) -> RunResult:
        """The reference loop until a final answer (agent/runs.py's RunOptions)."""
        return await self.do(run(query, **options))


class AsyncProjects:
    """The project routes, awaited."""

    def __init__(self, client: AsyncClient) -> None:
        self._client = client

    async def create(self, project_id: str) -> ProjectReport:
        """PUT the project (no error when it exists)."""
        return await self._client.do(operations.create_project(project_id))

    async def get(self, project_id: str) -> ProjectReport:
        """GET the project: files, versions, index state."""
        return await self._client.do(operations.describe_project(project_id))

    async def upload(
        self, project_id: str, path: str, data: bytes, if_match: str | None = None
    ) -> StoredFile:
        """PUT one file; if_match: the ETag it must have, operations.NEW_FILE, or None (any)."""
        return await self._client.do(operations.upload(project_id, path, data, if_match))

    async def download(self, project_id: str, path: str) -> tuple[bytes, str] | None:
        """GET one file's bytes and ETag; None when there is no such file."""
        return await self._client.do(operations.download(project_id, path))

    async def delete_file(self, project_id: str, path: str) -> None:
        """DELETE one file (gone already: no error)."""
        return await self._client.do(operations.delete_file(project_id, path))

    async def index(
        self, project_id: str, on_progress: Callable[[IndexProgress], Any] | None = None
    ) -> IndexResult:
        """POST .../index; each progress event to on_progress as it comes."""
        return await self._client.do(operations.index(project_id, on_progress))

    async def changes(self, project_id: str, since: int = 0) -> Changes:
        """Every change after version `since`, and the project's version."""
        return await self._client.do(operations.changes(project_id, since))

    async def sync_folder(
        self,
        project_id: str,
        folder: str | PathLike[str],
        options: SyncOptions | None = None,
        on_upload: Progress | None = None,
        on_index: Progress | None = None,
    ) -> SyncReport:
        """Client.projects.sync_folder, awaited."""
        op = sync_folder(
            project_id, Path(folder), self._client.base_url, options or SyncOptions(), on_upload, on_index
        )
        return await self._client.do(op)

    async def pull(
        self,
        project_id: str,
        folder: str | PathLike[str],
        force: bool = False,
        on_file: Progress | None = None,
    ) -> PullReport:
        """Client.projects.pull, awaited."""
        return await self._client.do(
            pull_folder(project_id, Path(folder), self._client.base_url, force, on_file)
        )
