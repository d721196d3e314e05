"""Approval tokens: issued, verified, refused when altered, misused or expired (with a clock we move)."""

import base64
import hashlib
import hmac
import json

import pytest
from pydantic import SecretStr

from reactstep.tools.errors import ApprovalRefused
from reactstep.tools.writes.approval import (
    ABSENT,
    Approvals,
    CallScope,
    Grant,
    canonical_json,
    open_approvals,
)

SECRET = b"unit-test-secret"
AGAIN = "Nothing was written. Propose the change again to get a fresh preview for the user to approve."
SCOPE = CallScope("demo", "edit_file", {"path": "src/app.py", "content": "x = 1\n", "description": ""})


class Clock:
    """A clock the test moves by hand."""

    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def test_a_token_verifies_for_its_scope_and_grants_what_the_preview_saw() -> None:
    approvals = Approvals(SECRET, 600, Clock(1_000.5))
    token, grant = approvals.issue(SCOPE, "etag-before", "etag-after")
    assert grant == Grant("etag-before", "etag-after", 1_600)
    reordered = CallScope("demo", "edit_file", dict(reversed(list(SCOPE.args.items()))))
    assert approvals.verify(token, reordered) == grant  # canonical JSON: key order does not matter
    approvals.check_unexpired(grant)


@pytest.mark.parametrize(
    ("scope", "message"),
    [
        (CallScope("other", "edit_file", SCOPE.args), "the approval_token was issued for another project."),
        (
            CallScope("demo", "create_file", SCOPE.args),
            "the approval_token was issued for edit_file, not create_file.",
        ),
        (
            CallScope("demo", "edit_file", {**SCOPE.args, "content": "x = 2\n"}),
            "the approval_token was issued for other arguments; it approves only the exact call that was "
            "previewed.",
        ),
    ],
    ids=["project", "tool", "arguments"],
)
def test_a_token_for_another_call_is_refused(scope: CallScope, message: str) -> None:
    approvals = Approvals(SECRET, 600)
    token, _ = approvals.issue(SCOPE, ABSENT, "after")
    with pytest.raises(ApprovalRefused) as refused:
        approvals.verify(token, scope)
    assert str(refused.value) == f"{message} {AGAIN}"


def forged(payload: dict[str, object], secret: bytes = SECRET) -> str:
    raw = canonical_json(payload)
    return f"{b64(raw)}.{b64(hmac.new(secret, raw, hashlib.sha256).digest())}"


FIELDS = {
    "args_sha256": SCOPE.args_sha256(),
    "base_version": ABSENT,
    "expires_at": 2_000_000_000,
    "project_id": "demo",
    "result_version": "after",
    "tool_name": "edit_file",
}


@pytest.mark.parametrize(
    "token",
    [
        "",
        ".",
        "abc",
        "abc.def",
        "ü.ü",
        forged(FIELDS, secret=b"another secret"),
        forged(FIELDS) + "x",
        forged(FIELDS).replace(".", ".A", 1),
        "=" + forged(FIELDS),
        forged({**FIELDS, "extra": 1}),  # signed with the secret, but not a payload this code writes
        forged(FIELDS).split(".")[0] + "." + forged(FIELDS).split(".")[0],
    ],
    ids=[
        "empty",
        "dot",
        "no dot",
        "not a mac",
        "not ascii",
        "other secret",
        "mac extended",
        "mac prefixed",
        "padding",
        "unknown field",
        "payload as mac",
    ],
)
def test_an_altered_or_foreign_token_is_refused(token: str) -> None:
    assert Approvals(SECRET, 600).verify(forged(FIELDS), SCOPE).result_version == "after"  # the control
    with pytest.raises(ApprovalRefused) as refused:
        Approvals(SECRET, 600).verify(token, SCOPE)
    assert (
        str(refused.value) == f"the approval_token is not one this server issued, or it was altered. {AGAIN}"
    )


def test_a_token_expires_ttl_seconds_after_the_preview() -> None:
    clock = Clock(1_767_225_000.25)
    approvals = Approvals(SECRET, 600, clock)
    token, grant = approvals.issue(SCOPE, ABSENT, "after")
    clock.now = 1_767_225_599.99
    approvals.check_unexpired(approvals.verify(token, SCOPE))
    clock.now = 1_767_225_600.0
    with pytest.raises(ApprovalRefused) as refused:
        approvals.check_unexpired(grant)
    assert str(refused.value) == f"the approval_token expired at 2026-01-01T00:00:00Z. {AGAIN}"


def test_the_longest_token_fits_the_request_limit() -> None:
    scope = CallScope("p" * 128, "t" * 64, {"path": "x" * 1024, "content": "y" * 1_000_000})
    token, _ = Approvals(SECRET, 600).issue(scope, "9" * 32 + "-10000", "8" * 32)
    assert len(token) <= 1000
    assert "yyyy" not in base64.urlsafe_b64decode(token.split(".")[0] + "==").decode()


def test_a_configured_secret_is_shared_and_a_missing_one_is_random(caplog: pytest.LogCaptureFixture) -> None:
    one, two = open_approvals(SecretStr("shared"), 600), open_approvals(SecretStr("shared"), 600)
    token, grant = one.issue(SCOPE, ABSENT, "after")
    assert two.verify(token, SCOPE) == grant
    assert caplog.text == ""
    for unset in (None, SecretStr("")):
        with pytest.raises(ApprovalRefused):
            open_approvals(unset, 600).verify(token, SCOPE)
    assert caplog.text.count("REACTSTEP_APPROVAL_SECRET is not set") == 2


def test_canonical_json_is_stable() -> None:
    assert (
        canonical_json({"b": [1, {"d": None, "c": "é"}], "a": True})
        == '{"a":true,"b":[1,{"c":"é","d":null}]}'.encode()
    )
    assert json.loads(canonical_json(SCOPE.args)) == SCOPE.args
