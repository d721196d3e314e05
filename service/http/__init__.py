"""The HTTP face of the server: the app, its endpoints and /mcp, bodies, keys, admission, serving, and the
background steps any replica answers for (background_steps.py, step_records.py, steps.py)."""
