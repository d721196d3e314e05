"""Traces: a run recorded as JSON lines (format.py), pinned to the project version it began at
(pinning.py), the scripted model a replay answers from (scripted_llm.py, scripted_replies.py), a
replay's comparison of each call with the recording (comparison.py), its report (report.py) and the
trace as one HTML page (viewer.py). The replay itself drives a `Client`, so it is replay.py one floor
up."""
