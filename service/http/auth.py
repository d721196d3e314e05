"""Who may call, and for which projects: service API keys, stored hashed, each scoped to project ids.

    REACTSTEP_API_KEYS='["sha256:<hex of the key>:demo,team-*", "sha256:<hex>:*:tokens_per_day=100000"]'

AuthMiddleware      public paths (health, readiness, version, the contract) pass; any other request needs
                    `Authorization: Bearer <key>` whose SHA-256 is a configured entry, else 401
                    unauthorized; the entry's grant rides on the request (scope["state"]["grant"]),
                    and its limits, when it sets any (scope["state"]["key_limits"], budgets/limits.py)
authorize_project   every endpoint that takes a project_id, on every request: the grant must cover
                    it, else 403 forbidden_project; the project rides on the request beside the grant
                    (scope["state"]["project"]), so its log line names it, refused or not
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

from reactstep.service.budgets.limits import KeyLimits, parse_limits
from reactstep.service.errors import Forbidden, Unauthorized, error_response
from reactstep.service.settings import Settings

PUBLIC_PATHS = frozenset({"/healthz", "/readyz", "/version", "/openapi.yaml"})
ENTRY = re.compile(
    r"sha256:(?P<digest>[0-9a-fA-F]{64}):(?P<scope>[A-Za-z0-9._*?-]+(,[A-Za-z0-9._*?-]+)*)(:(?P<limits>\S+))?"
)
KEY_ID_HEX = 32  # a key's counts are kept under the first 128 bits of its SHA-256
MIN_KEY_CHARS = 16
MAX_TOKEN_CHARS = 512
PRINTABLE_ASCII = re.compile(r"[\x21-\x7e]+")
DEV_MODE_WARNING = (
    "dev mode: no API keys are configured (REACTSTEP_API_KEYS), so every caller may use every project; "
    "this is allowed on loopback only"
)


@dataclass(frozen=True)
class Grant:
    """The projects one caller may use: fnmatch patterns over project ids ('*' is all)."""

    patterns: tuple[str, ...]

    def allows(self, project_id: str) -> bool:
        """Whether the grant covers this project."""
        if "*" in self.patterns:
            return True
        return any(fnmatch.fnmatchcase(project_id, pattern) for pattern in self.patterns)


EVERY_PROJECT = Grant(("*",))


@dataclass(frozen=True)
class KeyEntry:
    """One configured key: the SHA-256 of the key, what it grants, and its limits (None: none)."""

    digest: bytes
    grant: Grant
    limits: KeyLimits | None = None


DEV_MODE = KeyEntry(b"", EVERY_PROJECT)  # no keys configured: every project, no limits


def parse_key_entries(entries: list[str]) -> tuple[KeyEntry, ...]:
    """The configured keys; a malformed entry stops start-up, naming its position, never its text."""
    parsed = []
    for position, entry in enumerate(entries):
        match = ENTRY.fullmatch(entry.strip())
        if match is None:
            raise ValueError(
                f"REACTSTEP_API_KEYS entry {position} is not "
                "'sha256:<64 hex digits>:<project glob>[,...][:<limit>=<number>[,...]]'"
            )
        grant = Grant(tuple(match["scope"].split(",")))
        limits = None
        if match["limits"] is not None:
            try:
                limits = parse_limits(match["digest"][:KEY_ID_HEX].lower(), match["limits"])
            except ValueError as exc:
                raise ValueError(f"REACTSTEP_API_KEYS entry {position}: {exc}") from None
        parsed.append(KeyEntry(bytes.fromhex(match["digest"]), grant, limits))
    return tuple(parsed)


def key_entry(key: str, projects: str = "*", limits: str = "") -> str:
    """The REACTSTEP_API_KEYS entry for a key, a comma-separated list of project globs and the key's
    limits ('' for none; budgets/limits.py)."""
    if len(key) < MIN_KEY_CHARS:
        raise ValueError(f"a service API key needs at least {MIN_KEY_CHARS} characters")
    entry = f"sha256:{hashlib.sha256(key.encode()).hexdigest()}:{projects}"
    entry += f":{limits}" if limits else ""
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
        entry = self.entry_for(_authorization(scope)) if self.entries else DEV_MODE
        if entry is None:
            await _unauthorized()(scope, receive, send)
            return
        state = scope.setdefault("state", {})
        state["grant"] = entry.grant
        state["owner"] = key_owner(scope)
        if entry.limits is not None:
            state["key_limits"] = entry.limits
        await self.app(scope, receive, send)

    def grant_for(self, authorization: str | None) -> Grant | None:
        """The grant of the bearer key in the header; every project in dev mode; None if refused."""
        entry = self.entry_for(authorization) if self.entries else DEV_MODE
        return None if entry is None else entry.grant

    def entry_for(self, authorization: str | None) -> KeyEntry | None:
        """The configured entry of the bearer key in the header; None if refused."""
        token = _bearer_token(authorization)
        if token is None:
            return None
        digest = hashlib.sha256(token.encode()).digest()
        found = None
        for entry in self.entries:  # no early exit: the time taken does not tell which entry matched
            if hmac.compare_digest(digest, entry.digest):
                found = entry
        return found


def authorize_project(scope: Scope, project_id: str) -> str:
    """The project id, if the key of this request (its ASGI scope) covers it; 403 forbidden_project
    otherwise."""
    grant = scope.get("state", {}).get("grant")
    if not isinstance(grant, Grant):  # no AuthMiddleware ran: refuse rather than trust
        raise Unauthorized("this request was not authenticated")
    scope["state"]["project"] = project_id  # the request line names it (observe.py), refused or not
    if not grant.allows(project_id):
        raise Forbidden(f"this API key may not use project {project_id!r}", code="forbidden_project")
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


def key_owner(scope: Scope) -> str:
    """Who is calling, as a digest that never reveals the key: what a kept answer is scoped to
    (dev mode without a key: one owner for every caller)."""
    token = _bearer_token(_authorization(scope)) or ""
    return hashlib.sha256(b"reactstep key owner:" + token.encode()).hexdigest()
