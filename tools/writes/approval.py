"""Approval tokens: a preview's signed promise that a person may turn into exactly one write.

issue  (preview)  payload = canonical JSON {project_id, tool_name, args_sha256, base_version,
                                            result_version, expires_at}
                  token   = base64url(payload) "." base64url(HMAC-SHA256(server secret, payload))
verify (approve)  not canonical, or the MAC differs        -> ApprovalRefused (altered)
                  another project, tool or arguments       -> ApprovalRefused (another call)
                  -> Grant (base_version, result_version, expires_at)
check_unexpired   now >= expires_at                         -> ApprovalRefused (expired)

The arguments enter as the SHA-256 of their canonical JSON, which binds them as tightly as the
arguments themselves while the token carries no file content and stays short. Nothing is stored:
any replica with the same secret can check any token.

bound_to(caller)  the same tokens under a key of that caller's own (HMAC of the secret and the caller),
                  named as the protocol names them (MCP's requestState): one caller's token is altered
                  text to any other caller, and never an approval_token to execute_action
"""

import base64
import hashlib
import hmac
import json
import logging
import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from pydantic import SecretStr

from reactstep.tools.errors import ApprovalRefused

ABSENT = "absent"  # the base version of a file that does not exist yet
_FIELDS = ("args_sha256", "base_version", "expires_at", "project_id", "result_version", "tool_name")
_AGAIN = "Nothing was written. Propose the change again to get a fresh preview for the user to approve."
_BOUND_LABEL = b"reactstep/bound-approval\x00"

logger = logging.getLogger("reactstep")


@dataclass(frozen=True)
class CallScope:
    """The call a token approves: which project, which tool, and its canonical arguments."""

    project_id: str
    tool_name: str
    args: Mapping[str, Any]

    def args_sha256(self) -> str:
        """The SHA-256 of the arguments as canonical JSON (sorted keys, no spaces)."""
        return hashlib.sha256(canonical_json(self.args)).hexdigest()


@dataclass(frozen=True)
class Grant:
    """What a valid token allows: writing `result_version` over `base_version` until `expires_at`."""

    base_version: str
    result_version: str
    expires_at: int


@dataclass(frozen=True)
class PendingApproval:
    """A preview's approval request: the token to send back, the diff to show, and its expiry."""

    token: str
    diff: str
    expires_at: int


class Approvals:
    """Issues and checks approval tokens with one server secret and time-to-live."""

    def __init__(
        self,
        secret: bytes,
        ttl_s: int,
        clock: Callable[[], float] = time.time,
        name: str = "approval_token",
        issued_to: str = "",
    ) -> None:
        self._secret = secret
        self._ttl_s = ttl_s
        self._clock = clock
        self._name = name  # what the refusals call the token
        self._issued_to = issued_to  # whom, when a token is bound to a caller: " to this caller"

    def bound_to(self, caller: str, name: str) -> "Approvals":
        """Approvals whose tokens only `caller` can redeem, and only through these Approvals."""
        secret = hmac.new(self._secret, _BOUND_LABEL + caller.encode("utf-8"), hashlib.sha256).digest()
        return Approvals(secret, self._ttl_s, self._clock, name, " to this caller")

    def issue(self, scope: CallScope, base_version: str, result_version: str) -> tuple[str, Grant]:
        """A token approving `scope` to turn `base_version` into `result_version`, and its grant."""
        grant = Grant(base_version, result_version, int(self._clock()) + self._ttl_s)
        payload = canonical_json(
            {
                "args_sha256": scope.args_sha256(),
                "base_version": base_version,
                "expires_at": grant.expires_at,
                "project_id": scope.project_id,
                "result_version": result_version,
                "tool_name": scope.tool_name,
            }
        )
        return f"{_encode(payload)}.{_encode(self._mac(payload))}", grant

    def verify(self, token: str, scope: CallScope) -> Grant:
        """The grant of a token this server issued for exactly `scope` (expiry is checked apart)."""
        payload = self._authentic_payload(token)
        if payload["project_id"] != scope.project_id:
            raise ApprovalRefused(f"the {self._name} was issued for another project. {_AGAIN}")
        if payload["tool_name"] != scope.tool_name:
            raise ApprovalRefused(
                f"the {self._name} was issued for {payload['tool_name']}, not {scope.tool_name}. {_AGAIN}"
            )
        if payload["args_sha256"] != scope.args_sha256():
            raise ApprovalRefused(
                f"the {self._name} was issued for other arguments; it approves only the exact call "
                f"that was previewed. {_AGAIN}"
            )
        return Grant(payload["base_version"], payload["result_version"], payload["expires_at"])

    def check_unexpired(self, grant: Grant) -> None:
        """Refuse a grant whose time is up."""
        if self._clock() >= grant.expires_at:
            when = datetime.fromtimestamp(grant.expires_at, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
            raise ApprovalRefused(f"the {self._name} expired at {when}. {_AGAIN}")

    def _mac(self, payload: bytes) -> bytes:
        return hmac.new(self._secret, payload, hashlib.sha256).digest()

    def _authentic_payload(self, token: str) -> dict[str, Any]:
        """The token's payload, if this server signed exactly these bytes."""
        altered = ApprovalRefused(
            f"the {self._name} is not one this server issued{self._issued_to}, or it was altered. {_AGAIN}"
        )
        encoded_payload, _, encoded_mac = token.partition(".")
        try:
            payload, mac = _decode(encoded_payload), _decode(encoded_mac)
        except ValueError as exc:
            raise altered from exc
        if not hmac.compare_digest(mac, self._mac(payload)):
            raise altered
        fields = json.loads(payload)
        if not isinstance(fields, dict) or tuple(sorted(fields)) != _FIELDS:
            raise altered  # signed by this secret, but not by this code: refuse all the same
        return fields


def open_approvals(secret: SecretStr | None, ttl_s: int) -> Approvals:
    """Approvals signed with the configured secret, or with a random one for this process only."""
    if secret is None or not secret.get_secret_value():
        logger.warning(
            "REACTSTEP_APPROVAL_SECRET is not set: approval tokens are signed with a random key of "
            "this process, so they do not survive a restart and other replicas refuse them"
        )
        return Approvals(secrets.token_bytes(32), ttl_s)
    return Approvals(secret.get_secret_value().encode("utf-8"), ttl_s)


def canonical_json(value: Any) -> bytes:
    """JSON with sorted keys and no spaces: equal values give equal bytes."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def _encode(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _decode(text: str) -> bytes:
    """base64url without padding; anything but the one canonical spelling is a ValueError."""
    data = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))  # binascii.Error is a ValueError
    if not text or _encode(data) != text:  # b64decode skips stray characters; a token may not
        raise ValueError("not canonical base64url")
    return data
