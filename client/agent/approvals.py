"""Asking the human before a server write tool changes anything, for `reactstep ask`.

The server answers a write's first execute_action with the diff it would apply and writes nothing;
the approver shows the diff and decides: `--approve-all` applies every change, a terminal on stdin is
asked `Apply this change? [y/N]`, and with neither every change is refused (nobody can say yes).
"""

from typing import TextIO

from reactstep.client.agent.loop import ApprovalRequest, Approver

QUESTION = "Apply this change? [y/N] "
YES = ("y", "yes")


def terminal_approver(approve_all: bool, stdin: TextIO, stdout: TextIO) -> Approver:
    """An approver that shows each diff, then applies it, asks on the terminal, or refuses it."""

    def approve(call: ApprovalRequest) -> bool:
        show_change(call, stdout)
        if approve_all:
            return True
        if not stdin.isatty():
            stdout.write(
                "    (stdin is not a terminal, so nobody can approve it; --approve-all applies changes)\n"
            )
            return False
        stdout.write(f"    {QUESTION}")
        stdout.flush()
        return stdin.readline().strip().lower() in YES

    return approve


def show_change(call: ApprovalRequest, stdout: TextIO) -> None:
    """The tool that wants to write and its diff, for the human to read."""
    stdout.write(f"    {call.tool_name} wants to make this change:\n")
    diff = call.diff or "(the server sent no diff)"
    stdout.writelines(f"    {line}\n" for line in diff.splitlines())
    stdout.flush()
