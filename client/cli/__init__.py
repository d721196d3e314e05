"""The `reactstep` command line: the entry point (main.py), one module per group of commands, the server a
command talks to (servers.py), the exit codes, and what the commands print (console.py, progress.py)."""
