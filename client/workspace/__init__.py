"""A folder and a server project kept in step: sync and pull (sync.py, pull.py, keep_both.py), the folder's
files and the state last agreed (folder.py, sync_state.py), and which files count (gitignore.py, paths.py)."""
