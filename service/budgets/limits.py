"""The limits a service key's REACTSTEP_API_KEYS entry may set, after its project globs:

    sha256:<hex of the key>:<project glob>[,...][:<limit>=<value>[,<limit>=<value>...]]
    e.g. sha256:9f86...:demo,team-*:tokens_per_day=200000,usd_per_day=5,requests_per_minute=30

tokens_per_day       prompt and completion tokens a key's steps may use per UTC day
usd_per_day          US dollars they may cost per UTC day, at litellm's prices (a model it has no
                     price for counts against tokens_per_day only)
requests_per_minute  react_step calls that reach the model per minute (a minute of the clock)
"""

import re
from dataclasses import dataclass, fields

NAMES = ("tokens_per_day", "usd_per_day", "requests_per_minute")
PAIR = re.compile(r"(?P<name>[a-z_]+)=(?P<value>[0-9]+(\.[0-9]+)?)")


@dataclass(frozen=True)
class KeyLimits:
    """One key's limits, and the id its counts are kept under (the first 32 hex digits of its SHA-256)."""

    key_id: str
    tokens_per_day: int | None = None
    usd_per_day: float | None = None
    requests_per_minute: int | None = None

    def text(self) -> str:
        """The limits as an entry writes them ('' when there are none)."""
        return ",".join(
            f"{item.name}={_number(value)}"
            for item in fields(self)
            if item.name != "key_id" and (value := getattr(self, item.name)) is not None
        )


def parse_limits(key_id: str, text: str) -> KeyLimits:
    """The limits an entry's last part sets; ValueError naming what is wrong (never the key)."""
    found: dict[str, float] = {}
    for part in text.split(","):
        match = PAIR.fullmatch(part)
        if match is None or match["name"] not in NAMES:
            raise ValueError(f"a limit is <name>=<number>, the name one of {', '.join(NAMES)}")
        if match["name"] in found:
            raise ValueError(f"{match['name']} is set twice")
        found[match["name"]] = float(match["value"])
    for name in ("tokens_per_day", "requests_per_minute"):
        if name in found and not found[name].is_integer():
            raise ValueError(f"{name} is a whole number")
    return KeyLimits(
        key_id=key_id,
        tokens_per_day=_whole(found.get("tokens_per_day")),
        usd_per_day=found.get("usd_per_day"),
        requests_per_minute=_whole(found.get("requests_per_minute")),
    )


def _whole(value: float | None) -> int | None:
    return None if value is None else int(value)


def _number(value: float) -> str:
    return f"{value:.10f}".rstrip("0").rstrip(".")
