"""The ledger over a real local store: holds and settles a key's day with conditional writes, loses no
count to steps racing on threads, lets a hold lapse at its deadline, and names what refused a step."""

import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from reactstep.service.budgets.ledger import HELD_RETRY_S, Estimate, Ledger, day_of, until_midnight
from reactstep.service.budgets.limits import KeyLimits
from reactstep.service.errors import BudgetExhausted, RateLimited
from reactstep.tools.store.local import LocalStore

LIMITS = KeyLimits("0123456789abcdef0123456789abcdef", tokens_per_day=1000, usd_per_day=1.0)


@pytest.fixture
def ledger(tmp_path: Path) -> Ledger:
    return Ledger(LocalStore(tmp_path / "objects"))


def test_a_hold_becomes_what_the_step_spent(ledger: Ledger) -> None:
    counts, day = ledger.hold(LIMITS, "step-1", Estimate(600, 0.5), hold_s=60)
    assert day == day_of(time.time())
    assert (counts.tokens, counts.held(time.time()), counts.requests) == (0, (600, 0.5), 1)
    settled = ledger.settle(LIMITS.key_id, day, "step-1", 250, 0.125)
    assert (settled.tokens, settled.usd, settled.holds) == (250, 0.125, {})


def test_steps_racing_on_threads_lose_no_count(ledger: Ledger) -> None:
    limits = KeyLimits(LIMITS.key_id, tokens_per_day=10**9)

    def step(number: int) -> None:
        _, day = ledger.hold(limits, f"step-{number}", Estimate(10, None), hold_s=60)
        ledger.settle(limits.key_id, day, f"step-{number}", 7, None)

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(step, range(40)))
    counts = ledger.change(limits.key_id, day_of(time.time()), lambda counts: counts)
    assert (counts.tokens, counts.holds, counts.usd) == (280, {}, 0.0)
    assert counts.requests == 40 or time.time() % 60 < 5  # unless the clock's minute turned meanwhile


def test_steps_in_flight_hold_the_rest_until_they_settle_or_lapse(ledger: Ledger) -> None:
    ledger.hold(LIMITS, "lapses", Estimate(600, None), hold_s=0.5)
    with pytest.raises(BudgetExhausted) as refused:
        ledger.hold(LIMITS, "second", Estimate(600, None), hold_s=60)
    assert refused.value.retry_after_s == HELD_RETRY_S  # nothing spent yet: only the hold stands in the way
    assert refused.value.details == {
        "limit": "tokens_per_day",
        "value": 1000,
        "spent": 0,
        "held": 600,
        "step_most": 600,
    }
    time.sleep(0.6)
    counts, _ = ledger.hold(LIMITS, "second", Estimate(600, None), hold_s=60)
    assert list(counts.holds) == ["second"]


def test_a_day_spent_is_refused_until_midnight_and_dollars_are_checked_when_priced(ledger: Ledger) -> None:
    _, day = ledger.hold(LIMITS, "a", Estimate(100, 0.9), hold_s=60)
    ledger.settle(LIMITS.key_id, day, "a", 100, 0.9)
    with pytest.raises(BudgetExhausted) as refused:
        ledger.hold(LIMITS, "b", Estimate(100, 0.2), hold_s=60)
    assert refused.value.details["limit"] == "usd_per_day"
    assert abs(refused.value.retry_after_s - until_midnight(time.time())) < 1
    ledger.hold(LIMITS, "c", Estimate(100, None), hold_s=60)  # a model without a price: tokens only


def test_requests_per_minute_name_their_limit(ledger: Ledger) -> None:
    limits = KeyLimits(LIMITS.key_id, requests_per_minute=1)
    if time.time() % 60 > 55:
        time.sleep(61 - time.time() % 60)
    ledger.hold(limits, "a", Estimate(1, None), hold_s=60)
    with pytest.raises(RateLimited) as refused:
        ledger.hold(limits, "b", Estimate(1, None), hold_s=60)
    assert refused.value.details == {"limit": "requests_per_minute", "value": 1}
    assert 0 < refused.value.retry_after_s <= 60
