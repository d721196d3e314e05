"""The write machinery beneath the tools: approval tokens and diffs (write_flow.py runs a write on them)."""
