"""The reference ReAct loop of a thin client: the loop itself (loop.py) and asking a person before a
write (approvals.py); `client.run`'s options and its trace are runs.py, one floor up."""
