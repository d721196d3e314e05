"""What one format reader found in a reply."""

from dataclasses import dataclass, field

from reactstep.service.parsing.steps import Step


@dataclass(frozen=True)
class Reading:
    """The steps a reader found, and why a candidate it skipped did not read (for the refusal)."""

    steps: list[Step] = field(default_factory=list)
    problem: str = ""
