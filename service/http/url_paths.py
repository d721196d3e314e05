"""The file path of a /files/ URL, decoded from the bytes the client sent rather than the server's text.

An ASGI server percent-decodes the URL into `path` with U+FFFD for bytes that are not UTF-8, so
%FF%FE.py and %FE%FF.py would both read "\ufffd\ufffd.py" and name one file. Decoded here from
`raw_path`, such bytes stay surrogate escapes, which normalize_path refuses (422 invalid_path)
naming them: b'\xff\xfe.py'.
"""

from urllib.parse import unquote_to_bytes

from starlette.requests import Request

FILES = b"/files/"


def url_file_path(request: Request) -> str:
    """The {path} of /api/projects/{project_id}/files/{path}, exactly as sent (non-UTF-8 bytes kept
    as surrogate escapes for the path rules to refuse)."""
    raw: bytes | None = request.scope.get("raw_path")
    # A project id holds no '/' nor '%', so the first "/files/" after "/api/projects/" ends it.
    start = -1 if raw is None else raw.find(FILES, raw.find(b"/api/projects/"))
    if raw is None or start < 0:  # a server that does not pass the raw bytes: its text is all there is
        return str(request.path_params["path"])
    return unquote_to_bytes(raw[start + len(FILES) :]).decode("utf-8", "surrogateescape")
