"""A key's counts for one UTC day, one JSON object in the object store that every replica reads and
writes with conditional puts (read it with its ETag, change it, put it only while the ETag holds;
another replica's write in between: read again):

    <store>/.reactstep-index/_budgets/<key id>-<YYYY-MM-DD>.json
    {"tokens": spent, "usd": spent, "minute": the clock's minute, "requests": in that minute,
     "holds": {step id: {"tokens", "usd", "until"}}}

hold    before the model is called: refused (429) when the minute's requests are at
        requests_per_minute, or when spent + held + this step's most would pass tokens_per_day or
        usd_per_day; else the request is counted and the step's most held (its prompt, counted by
        the server, plus its max_tokens)
settle  when the reply is in: the hold becomes what the provider reported
A hold lapses at its `until` (the step's LLM deadline and a margin): a step whose model call failed,
or whose replica died, stops holding the budget then. Because each step holds its most before it is
called, replicas together pass a limit only by what a provider counts beyond the server's own count
of a prompt (docs/budgets.md).
"""

import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from pydantic import BaseModel, Field

from reactstep.contract.step_report import KeyBudget
from reactstep.service.budgets.limits import KeyLimits
from reactstep.service.errors import BudgetExhausted, Overloaded, RateLimited
from reactstep.tools.errors import StaleFile
from reactstep.tools.store.objects import ObjectStore

BUDGETS = "_budgets"  # the store's index files under a name no project can have (ids begin alnum)
MAX_ATTEMPTS = 40  # conditional puts lost to other steps of the same key before giving up (503)
HELD_RETRY_S = 2.0  # refused only because steps in flight hold the rest: they settle within seconds


class Hold(BaseModel):
    """What one step in flight may spend at most, until it settles or `until` (unix seconds) passes."""

    tokens: int
    usd: float
    until: float


class DayCounts(BaseModel):
    """One key's counts for one UTC day."""

    tokens: int = 0
    usd: float = 0.0
    minute: int = 0  # minutes since the epoch of `requests`
    requests: int = 0
    holds: dict[str, Hold] = Field(default_factory=dict)

    def held(self, now: float) -> tuple[int, float]:
        """Tokens and dollars the steps in flight hold."""
        live = [hold for hold in self.holds.values() if hold.until > now]
        return sum(hold.tokens for hold in live), sum(hold.usd for hold in live)

    def requests_in(self, minute: int) -> int:
        """The requests counted in this minute."""
        return self.requests if self.minute == minute else 0


@dataclass(frozen=True)
class Estimate:
    """The most one step may spend: its prompt and max_tokens, and their price (None: unpriced)."""

    tokens: int
    usd: float | None


class Ledger:
    """The day's counts of each key, in the object store."""

    def __init__(self, store: ObjectStore) -> None:
        self.store = store

    def hold(self, limits: KeyLimits, step_id: str, most: Estimate, hold_s: float) -> tuple[DayCounts, str]:
        """Count the request and hold the step's most; BudgetExhausted or RateLimited when it may not.
        The counts after, and the day they are of (the step settles on it)."""
        now = time.time()
        day = day_of(now)

        def admit(counts: DayCounts) -> DayCounts:
            check(counts, limits, most, now)
            minute = int(now // 60)
            counts.requests = counts.requests_in(minute) + 1
            counts.minute = minute
            counts.holds[step_id] = Hold(tokens=most.tokens, usd=most.usd or 0.0, until=now + hold_s)
            return counts

        return self.change(limits.key_id, day, admit), day

    def settle(self, key_id: str, day: str, step_id: str, tokens: int, usd: float | None) -> DayCounts:
        """The step's hold replaced by what it spent."""

        def spend(counts: DayCounts) -> DayCounts:
            counts.holds.pop(step_id, None)
            counts.tokens += tokens
            counts.usd += usd or 0.0
            return counts

        return self.change(key_id, day, spend)

    def change(self, key_id: str, day: str, change: Callable[[DayCounts], DayCounts]) -> DayCounts:
        """Read, change and conditionally write the day's counts until no other write came between."""
        name = f"{key_id}-{day}.json"
        for _ in range(MAX_ATTEMPTS):
            found = self.store.get_index_file_tagged(BUDGETS, name)
            counts = DayCounts.model_validate_json(found[0]) if found else DayCounts()
            now = time.time()
            counts.holds = {step: hold for step, hold in counts.holds.items() if hold.until > now}
            counts = change(counts)
            try:
                self.store.put_index_file_if(
                    BUDGETS, name, counts.model_dump_json().encode(), found[1] if found else None
                )
                return counts
            except StaleFile:
                time.sleep(random.uniform(0.002, 0.02))  # another step of this key wrote first
        raise Overloaded("too many steps of this key are being counted at once", retry_after_s=1)


def check(counts: DayCounts, limits: KeyLimits, most: Estimate, now: float) -> None:
    """Refuse a step that would pass one of the key's limits, naming it."""
    minute = int(now // 60)
    if limits.requests_per_minute is not None and counts.requests_in(minute) >= limits.requests_per_minute:
        raise RateLimited(
            f"this key may make {limits.requests_per_minute} requests per minute",
            retry_after_s=60 - now % 60,
            details={"limit": "requests_per_minute", "value": limits.requests_per_minute},
        )
    held_tokens, held_usd = counts.held(now)
    if limits.tokens_per_day is not None:
        _within("tokens_per_day", limits.tokens_per_day, counts.tokens, held_tokens, most.tokens, now)
    if limits.usd_per_day is not None and most.usd is not None:
        _within("usd_per_day", limits.usd_per_day, counts.usd, held_usd, most.usd, now)


def _within(name: str, limit: float, spent: float, held: float, most: float, now: float) -> None:
    if spent + held + most <= limit:
        return
    for_the_day = spent + most > limit  # not only the steps in flight: nothing frees until midnight
    message = (
        f"this key's {name} is {limit:g}: {spent:g} spent today and {held:g} held by steps in flight "
        f"leave too little for this step's most ({most:g}, its prompt and max_tokens)"
    )
    raise BudgetExhausted(
        message,
        retry_after_s=until_midnight(now) if for_the_day else HELD_RETRY_S,
        details={"limit": name, "value": limit, "spent": spent, "held": held, "step_most": most},
    )


def budget_left(counts: DayCounts, limits: KeyLimits, priced: bool) -> KeyBudget:
    """What the key has left, steps in flight counted at their most."""
    now = time.time()
    held_tokens, held_usd = counts.held(now)
    tokens_left = usd_left = requests_left = None
    if limits.tokens_per_day is not None:
        tokens_left = max(limits.tokens_per_day - counts.tokens - held_tokens, 0)
    if limits.usd_per_day is not None:
        usd_left = round(max(limits.usd_per_day - counts.usd - held_usd, 0.0), 8)
    if limits.requests_per_minute is not None:
        requests_left = max(limits.requests_per_minute - counts.requests_in(int(now // 60)), 0)
    resets_at = datetime.fromtimestamp(now + until_midnight(now), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return KeyBudget(
        tokens_left=tokens_left,
        usd_left=usd_left,
        requests_left=requests_left,
        resets_at=resets_at,
        priced=priced,
    )


def day_of(now: float) -> str:
    """The UTC day of a unix time, as YYYY-MM-DD."""
    return datetime.fromtimestamp(now, UTC).strftime("%Y-%m-%d")


def until_midnight(now: float) -> float:
    """Seconds from `now` to the next midnight UTC."""
    moment = datetime.fromtimestamp(now, UTC)
    midnight = (moment + timedelta(days=1)).replace(hour=0, minute=0, second=0, microsecond=0)
    return (midnight - moment).total_seconds()
