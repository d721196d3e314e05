"""Who may call, and for which projects: service API keys, stored hashed, each scoped to project ids.

    REACTSTEP_API_KEYS='["sha256:<hex of the key>:demo,team-*", "sha256:<hex>:*"]'

AuthMiddleware      public paths (health, readiness, version, the contract) pass; any other request needs
                    `Authorization: Bearer <key>` whose SHA-256 is a configured entry, else 401
                    unauthorized; the entry's grant rides on the request (scope["state"]["grant"]), and
                    who called (scope["state"]["caller"]: the key's SHA-256, "dev-mode" without keys)
authorize_project   every endpoint that takes a project_id, on every request: the grant must cover
                    it, else 403 forbidden_project
no keys configured  dev mode: every request is granted every project; `reactstep serve` allows it
                    only on a loopback address and warns at start-up
Keys are random (`reactstep hash-key` makes one), so one unsalted SHA-256 is a fit digest.
"""

import fnmatch
import hashlib
import hmac
import ipaddress
import re
import secrets
from dataclasses import dataclass

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from reactstep.service import logs
from reactstep.service.errors import ForbiddenProject, Unauthorized, error_response
from reactstep.service.settings import Settings

PUBLIC_PATHS = frozenset({"/healthz", "/readyz", "/version", "/openapi.yaml"})
ENTRY = re.compile(r"sha256:(?P<digest>[0-9a-fA-F]{64}):(?P<scope>[A-Za-z0-9._*?-]+(,[A-Za-z0-9._*?-]+)*)")
MIN_KEY_CHARS = 16
MAX_TOKEN_CHARS = 512
PRINTABLE_ASCII = re.compile(r"[\x21-\x7e]+")
DEV_MODE_WARNING = (
    "dev mode: no API keys are configured (REACTSTEP_API_KEYS), so every caller may use every project; "
    "this is allowed on loopback only"
)


@dataclass(frozen=True)
class Grant:
    """The projects one caller may use: fnmatch patterns over project ids ('*' is all); and who that
    caller is (what MCP binds a write's requestState to)."""

    patterns: tuple[str, ...]
    caller: str = "dev-mode"

    def allows(self, project_id: str) -> bool:
        """Whether the grant covers this project."""
        if "*" in self.patterns:
            return True
        return any(fnmatch.fnmatchcase(project_id, pattern) for pattern in self.patterns)


EVERY_PROJECT = Grant(("*",))


@dataclass(frozen=True)
class KeyEntry:
    """One configured key: the SHA-256 of the key and what it grants."""

    digest: bytes
    grant: Grant


def parse_key_entries(entries: list[str]) -> tuple[KeyEntry, ...]:
    """The configured keys; a malformed entry stops start-up, naming its position, never its text."""
    parsed = []
    for position, entry in enumerate(entries):
        match = ENTRY.fullmatch(entry.strip())
        if match is None:
            raise ValueError(
                f"REACTSTEP_API_KEYS entry {position} is not 'sha256:<64 hex digits>:<project glob>[,...]'"
            )
        grant = Grant(tuple(match["scope"].split(",")), caller=match["digest"].lower())
        parsed.append(KeyEntry(bytes.fromhex(match["digest"]), grant))
    return tuple(parsed)


def key_entry(key: str, projects: str = "*") -> str:
    """The REACTSTEP_API_KEYS entry for a key and a comma-separated list of project globs."""
    if len(key) < MIN_KEY_CHARS:
        raise ValueError(f"a service API key needs at least {MIN_KEY_CHARS} characters")
    entry = f"sha256:{hashlib.sha256(key.encode()).hexdigest()}:{projects}"
    parse_key_entries([entry])  # the same check start-up makes
    return entry


def new_key() -> str:
    """A fresh random service API key (256 bits)."""
    return "rsk_" + secrets.token_urlsafe(32)


class AuthMiddleware:
    """Authenticates every non-public HTTP request before the app reads its body."""

    def __init__(self, app: ASGIApp, entries: tuple[KeyEntry, ...]) -> None:
        self.app = app
        self.entries = entries

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in PUBLIC_PATHS:
            await self.app(scope, receive, send)
            return
        grant = self.grant_for(_authorization(scope)) if self.entries else EVERY_PROJECT
        if grant is None:
            await _unauthorized()(scope, receive, send)
            return
        state = scope.setdefault("state", {})
        state["grant"], state["caller"] = grant, grant.caller
        await self.app(scope, receive, send)

    def grant_for(self, authorization: str | None) -> Grant | None:
        """The grant of the bearer key in the header; every project in dev mode; None if refused."""
        if not self.entries:
            return EVERY_PROJECT
        token = _bearer_token(authorization)
        if token is None:
            return None
        digest = hashlib.sha256(token.encode()).digest()
        found = None
        for entry in self.entries:  # no early exit: the time taken does not tell which entry matched
            if hmac.compare_digest(digest, entry.digest):
                found = entry.grant
        return found


def authorize_project(scope: Scope, project_id: str) -> str:
    """The project id, if the key of this request (its ASGI scope) covers it; 403 forbidden_project
    otherwise."""
    grant = scope.get("state", {}).get("grant")
    if not isinstance(grant, Grant):  # no AuthMiddleware ran: refuse rather than trust
        raise Unauthorized("this request was not authenticated")
    allowed = grant.allows(project_id)
    logs.note(project=project_id)  # a refused request's log line names the project too
    if not allowed:
        raise ForbiddenProject(f"this API key may not use project {project_id!r}")
    return project_id


def serving_refusal(settings: Settings, host: str) -> str | None:
    """Why `reactstep serve` must not start on this host with these settings, or None."""
    if settings.api_keys:
        try:
            parse_key_entries(settings.api_keys)
        except ValueError as exc:
            return str(exc)
        return None
    if is_loopback_host(host):
        return None
    return (
        f"refusing to serve on {host} without API keys: set REACTSTEP_API_KEYS "
        "(see `reactstep hash-key`) or bind a loopback address such as 127.0.0.1"
    )


def is_loopback_host(host: str) -> bool:
    """Whether the bind address is loopback only (127.0.0.0/8, ::1 or localhost)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _bearer_token(authorization: str | None) -> str | None:
    if not authorization:
        return None
    scheme, _, token = authorization.partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token or len(token) > MAX_TOKEN_CHARS:
        return None
    # A key is printable ASCII: one holding a control character (a tab, a NUL) is no key of ours.
    return token if PRINTABLE_ASCII.fullmatch(token) else None


def _authorization(scope: Scope) -> str | None:
    """The Authorization header, as Starlette's Headers would give it (the first, latin-1)."""
    for name, value in scope["headers"]:
        if name == b"authorization":
            return value.decode("latin-1")  # type: ignore[no-any-return]
    return None


def _unauthorized() -> JSONResponse:
    return error_response(Unauthorized("send a valid service API key as 'Authorization: Bearer <key>'"))
