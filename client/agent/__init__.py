"""The reference ReAct loop of a thin client: the loop itself (loop.py), `client.run`'s options and its
trace (runs.py), and asking a person before a write (approvals.py)."""
