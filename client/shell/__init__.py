"""The client-side shell tools (`bash`, `bash_output`, `kill_bash`): their arguments and results
(tools.py), the processes they run (processes.py) and bash_output's safe filter (line_filter.py)."""
