"""The exit statuses of the `reactstep` command: one table, which `reactstep --help` prints and
docs/python-client.md shows (tests/client/test_exit_codes.py keeps the page in line with it)."""

import textwrap

HELP_COLUMNS = 100
OK = 0
FAILED = 1
USAGE = 2
NO_ANSWER = 3
INTERRUPTED = 130  # what a shell reports for a command ended by SIGINT (128 + 2)
SIGPIPE = 141  # what a shell reports for a command ended by SIGPIPE

EXIT_CODES: dict[str, str] = {
    str(OK): "done: the command did its job (ask: a final answer; replay: the replay matched)",
    str(FAILED): "failed: no server to use, the server refused or could not be reached, a replay diverged, "
    "a file could not be read or written (the error line says which)",
    str(USAGE): "usage: an option, a setting or an input file that cannot be used; serve or hash-key "
    "without the server package; ask with no LLM configured",
    str(NO_ANSWER): "ask: the loop ended without a final answer (max_iterations_reached, loop_detected)",
    str(INTERRUPTED): "interrupted (Ctrl-C): the step under way was stopped, its request closed (so the "
    "server cancelled its model call), and a trace being recorded ends with it",
    str(SIGPIPE): "the reader of the output went away (piped into `head`, which had all it wanted)",
    "128+N": "ended by signal N while shell tools ran (143: SIGTERM, 129: SIGHUP)",
}


def help_epilog(columns: int = HELP_COLUMNS) -> str:
    """The table as `reactstep --help` ends."""
    width = max(map(len, EXIT_CODES))
    indent = " " * (width + 4)
    rows = [
        textwrap.fill(what, columns, initial_indent=f"  {code:<{width}}  ", subsequent_indent=indent)
        for code, what in EXIT_CODES.items()
    ]
    return "\n".join(["exit status:", *rows])


def markdown_table() -> str:
    """The table as docs/python-client.md shows it."""
    rows = [f"| {code} | {what} |" for code, what in EXIT_CODES.items()]
    return "\n".join(["| Exit status | Meaning |", "| --- | --- |", *rows])
