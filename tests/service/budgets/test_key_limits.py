"""A key's limits in its REACTSTEP_API_KEYS entry: read at start-up (a malformed one stops it, naming the
entry's position and never its text), written by `reactstep hash-key`, and carried by each request."""

import hashlib
import io

import pytest

from reactstep.client.cli.main import main
from reactstep.service.budgets.limits import KeyLimits, parse_limits
from reactstep.service.http.auth import key_entry, parse_key_entries

KEY = "rsk_limits-test-key-0123456789"
DIGEST = hashlib.sha256(KEY.encode()).hexdigest()


@pytest.mark.parametrize(
    ("text", "limits"),
    [
        ("tokens_per_day=100000", KeyLimits("id", tokens_per_day=100000)),
        ("usd_per_day=2.5", KeyLimits("id", usd_per_day=2.5)),
        ("requests_per_minute=30", KeyLimits("id", requests_per_minute=30)),
        (
            "requests_per_minute=30,usd_per_day=0.0005,tokens_per_day=7",
            KeyLimits("id", tokens_per_day=7, usd_per_day=0.0005, requests_per_minute=30),
        ),
    ],
)
def test_limits_are_read_and_written_back_the_same(text: str, limits: KeyLimits) -> None:
    assert parse_limits("id", text) == limits
    assert parse_limits("id", limits.text()) == limits


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (
            "tokens=5",
            "a limit is <name>=<number>, the name one of tokens_per_day, usd_per_day, requests_per_minute",
        ),
        (
            "tokens_per_day=-5",
            "a limit is <name>=<number>, the name one of tokens_per_day, usd_per_day, requests_per_minute",
        ),
        ("tokens_per_day=1.5", "tokens_per_day is a whole number"),
        ("usd_per_day=1,usd_per_day=2", "usd_per_day is set twice"),
    ],
)
def test_a_malformed_limit_stops_start_up_naming_the_entry(text: str, problem: str) -> None:
    with pytest.raises(ValueError) as refused:
        parse_key_entries([f"sha256:{'0' * 64}:*", f"sha256:{DIGEST}:demo:{text}"])
    assert str(refused.value) == f"REACTSTEP_API_KEYS entry 1: {problem}"
    assert DIGEST not in str(refused.value)


def test_an_entry_carries_its_limits_under_the_keys_id() -> None:
    with_limits, without = parse_key_entries(
        [f"sha256:{DIGEST.upper()}:demo,team-*:usd_per_day=5", f"sha256:{DIGEST}:*"]
    )
    assert with_limits.limits == KeyLimits(DIGEST[:32], usd_per_day=5.0)
    assert with_limits.grant.patterns == ("demo", "team-*")
    assert without.limits is None


def test_hash_key_writes_the_limits_it_is_given(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(KEY + "\n"))
    command = [
        "hash-key",
        "--stdin",
        "--projects",
        "demo",
        "--tokens-per-day",
        "200000",
        "--usd-per-day",
        "0.5",
    ]
    assert main(command) == 0
    entry = f"sha256:{DIGEST}:demo:tokens_per_day=200000,usd_per_day=0.5"
    assert capsys.readouterr().out == f"entry: {entry}\n"
    assert key_entry(KEY, "demo", "tokens_per_day=200000,usd_per_day=0.5") == entry
