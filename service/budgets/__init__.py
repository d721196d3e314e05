"""Budgets per service key: the limits its entry sets (limits.py), the day's counts every replica
shares in the object store (ledger.py), and the step path's one entry that checks and records them
(spending.py)."""
