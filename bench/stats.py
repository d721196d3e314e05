"""Percentiles and the machine line every benchmark prints."""

import os
import platform
import statistics


def percentile(samples: list[float], fraction: float) -> float:
    """The sample at `fraction` of the sorted list (nearest rank)."""
    ordered = sorted(samples)
    index = min(len(ordered) - 1, max(0, round(fraction * len(ordered)) - 1))
    return ordered[index]


def describe(name: str, samples_ms: list[float]) -> str:
    """'name: p50 X ms, p99 Y ms, mean Z ms (n=N)'."""
    return (
        f"{name}: p50 {percentile(samples_ms, 0.5):.2f} ms, p99 {percentile(samples_ms, 0.99):.2f} ms, "
        f"mean {statistics.fmean(samples_ms):.2f} ms (n={len(samples_ms)})"
    )


def machine() -> str:
    """One line naming the machine the figures come from."""
    return f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
