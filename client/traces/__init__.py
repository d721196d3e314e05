"""Traces: a run recorded as JSON lines (format.py), pinned to the project version it began at
(pinning.py), replayed against a scripted model (replay.py, report.py, scripted_llm.py,
scripted_replies.py) and shown as one HTML page (viewer.py)."""
