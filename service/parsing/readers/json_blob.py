"""JSON actions anywhere in the reply: bare, in a ``` fence, in <tool_call> tags, nearly JSON.

Each object whose first key names a tool or its input (shapes.py) is decoded where it starts;
one that does not decode is repaired (lenient_json.py) or, failing that, reported.
"""

from collections.abc import Mapping
from typing import Any

from reactstep.service.parsing.lenient_json import decode_at
from reactstep.service.parsing.readers.reading import Reading
from reactstep.service.parsing.readers.shapes import BLOB_START, blob_step
from reactstep.service.parsing.steps import Step, in_spans
from reactstep.service.parsing.text_parts import complaint_at

# Each failed blob may be repaired (json-repair reads ~3 ms per KB); hostile input repeats them.
_MAX_BAD_BLOBS = 5


def read(body: str, taken: list[Step], tools: Mapping[str, Any]) -> Reading:
    """JSON action blobs outside the steps already taken, and why the first bad one did not decode."""
    steps: list[Step] = []
    problem, pos, failures = "", 0, 0
    for match in BLOB_START.finditer(body):
        start = match.start()
        if start < pos or in_spans(start, taken):
            continue
        try:
            value, pos, note = decode_at(body, start)
        except (ValueError, RecursionError) as exc:
            problem = problem or str(exc)
            failures += 1
            # Each failed decode may rescan the rest of the reply; hostile input repeats them.
            if failures >= _MAX_BAD_BLOBS:
                break
            continue
        with complaint_at(body, start):
            step = blob_step(value, (start, pos), body[start:pos].strip(), tools, (note,) if note else ())
        if step is not None:
            steps.append(step)
    return Reading(steps, problem)
