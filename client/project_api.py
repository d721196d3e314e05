"""The project routes of a reactstep server, as the CLI's sync and pull call them (one connection pool)."""

import json
from typing import Any
from urllib.parse import quote

import httpx

from reactstep.client.loop import ApiError, ClientError, EventSink, api_error, read_events

NEW_FILE = "new"  # put_file's if_match for a file that must not exist yet (If-None-Match: *)


class ProjectApi:
    """PUT/GET/DELETE of one project, its files, sync, changes and index, with errors as ApiError."""

    def __init__(self, server_url: str, project_id: str, api_key: str | None, timeout_s: float = 300.0):
        self.project_id = project_id
        self._server_url = server_url
        headers = {"authorization": f"Bearer {api_key}"} if api_key else {}
        self._base = f"/api/projects/{quote(project_id, safe='')}"
        self._http = httpx.Client(base_url=server_url, headers=headers, timeout=timeout_s)

    def __enter__(self) -> "ProjectApi":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._http.close()

    def create(self) -> dict[str, Any]:
        """Create the project (idempotent); its report."""
        return _json(self._call("PUT", "").content)

    def describe(self) -> dict[str, Any]:
        """Files, chunks, versions and index state."""
        return _json(self._call("GET", "").content)

    def describe_or_create(self) -> dict[str, Any]:
        """The project's description, the project created first when the server does not know it."""
        try:
            return self.describe()
        except ApiError as exc:
            if exc.code != "project_not_found":
                raise
        return self.create()

    def sync(self, body: dict[str, Any]) -> dict[str, Any]:
        """POST .../sync with the manifest; the plan."""
        return _json(self._call("POST", "/sync", json=body).content)

    def put_file(self, path: str, data: bytes, if_match: str | None) -> dict[str, Any]:
        """Store one file; if_match: its expected ETag, NEW_FILE (it must not exist) or None (any)."""
        headers = {}
        if if_match == NEW_FILE:
            headers["if-none-match"] = "*"
        elif if_match is not None:
            headers["if-match"] = f'"{if_match}"'
        return _json(self._call("PUT", _file(path), content=data, headers=headers).content)

    def delete_file(self, path: str) -> None:
        """Delete one file (a file already gone is no error)."""
        try:
            self._call("DELETE", _file(path))
        except ApiError as exc:
            if exc.code != "file_not_found":
                raise

    def get_file(self, path: str) -> bytes | None:
        """One file's bytes; None when the project has no such file (any more)."""
        found = self.get_file_tagged(path)
        return None if found is None else found[0]

    def get_file_tagged(self, path: str) -> tuple[bytes, str] | None:
        """One file's bytes and ETag (unquoted); None when the project has no such file (any more)."""
        try:
            response = self._call("GET", _file(path))
        except ApiError as exc:
            if exc.code == "file_not_found":
                return None
            raise
        return response.content, response.headers.get("etag", "").strip('"')

    def changes(self, since: int) -> tuple[int, list[dict[str, Any]]]:
        """The project's version and every change after `since`, following the feed's pages."""
        collected: list[dict[str, Any]] = []
        while True:
            page = _json(self._call("GET", "/changes", params={"since": since}).content)
            collected.extend(page["changes"])
            if not page["changes"] or page["changes"][-1]["version"] >= page["version"]:
                return page["version"], collected
            since = page["changes"][-1]["version"]

    def index(self, on_event: EventSink) -> dict[str, Any]:
        """POST .../index with its progress streamed (each `progress` event to on_event); the result."""
        try:
            with self._http.stream("POST", self._base + "/index", json={"stream": True}) as response:
                if response.status_code >= 400:
                    raise api_error(response.status_code, _error_body(response.read()))
                return read_events(response.iter_lines(), on_event)
        except httpx.HTTPError as exc:
            raise ClientError(f"the index stream from {self._server_url} failed: {exc}") from exc

    def _call(self, method: str, path: str, **options: Any) -> httpx.Response:
        try:
            response = self._http.request(method, self._base + path, **options)
        except httpx.HTTPError as exc:
            raise ClientError(f"cannot reach {self._server_url}: {exc}") from exc
        if response.status_code >= 400:
            raise api_error(response.status_code, _error_body(response.content))
        return response


def _file(path: str) -> str:
    return "/files/" + quote(path, safe="/")


def _json(body: bytes) -> dict[str, Any]:
    """The JSON object of an answer; ClientError when the server sent something else."""
    try:
        parsed = json.loads(body)
    except ValueError:
        parsed = None
    if not isinstance(parsed, dict):
        shown = body[:200].decode(errors="replace")
        raise ClientError(f"the server answered with no JSON object: {shown!r}")
    return parsed


def _error_body(body: bytes) -> Any:
    try:
        return json.loads(body)
    except ValueError:
        return {"error": {"code": "bad_response", "message": body[:200].decode(errors="replace")}}
