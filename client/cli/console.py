"""What `reactstep ask` prints as the loop runs: each step, each observation (compactly), each decision."""

from collections.abc import Callable
from typing import Any

SHOWN_LINES = 15

Listener = Callable[[str, dict[str, Any], dict[str, Any]], None]


class StepPrinter:
    """Prints each step as the loop runs, then hands it on (to a trace recorder)."""

    def __init__(self, then: Listener | None = None) -> None:
        self._then = then
        self._step = 0
        self._streamed = False  # this step's thought has been printed as it streamed

    def show_thought(self, delta: str) -> None:
        """Print a thought delta as it arrives."""
        if not self._streamed:
            print("    Thought: ", end="")
            self._streamed = True
        print(delta.replace("\n", "\n    "), end="", flush=True)

    def end_line(self) -> None:
        """End a thought that streamed without its step (the stream ended in an error), so what is
        printed next starts on a line of its own."""
        if self._streamed:
            print(flush=True)
            self._streamed = False

    def __call__(self, kind: str, request: dict[str, Any], response: dict[str, Any]) -> None:
        if kind == "react_step":
            self._step += 1
            if self._streamed:
                print()
            print_step(self._step, response, thought_shown=self._streamed)
            self._streamed = False
        elif kind == "step_error":
            pass  # the error itself is raised, and the command prints it
        elif kind == "approval":
            print("    Approved." if response["approved"] else "    Rejected: nothing was written.")
        elif (response.get("approval") or {}).get("required"):
            print("    Needs approval (nothing was written yet).")
        else:
            label = "Output" if kind == "client_action" else "Observation"
            error = " (error)" if response["is_error"] else ""
            print(f"    {label}{error}:\n    {compact(response['observation'])}")
        if self._then is not None:
            self._then(kind, request, response)


def print_step(number: int, response: dict[str, Any], thought_shown: bool = False) -> None:
    """One react_step answer: its status, thought, action or answer."""
    print(f"[{number}] {response['status']}")
    if response.get("thought") and not thought_shown:
        print(f"    Thought: {response['thought']}")
    if response.get("action_details"):
        print(f"    {describe_action(response['action_details'])}")
    if response.get("format_error"):
        print(f"    (reply could not be parsed) {response['format_error'].splitlines()[0]}")
    if response.get("final_answer") is not None:
        print(f"Final Answer: {response['final_answer']}")


def describe_action(action: dict[str, Any]) -> str:
    """A local shell command as a prompt line (`$ make test`); any other action as the model wrote it."""
    args = action.get("tool_args", {})
    if action.get("executor") == "client" and action["tool_name"] == "bash" and "command" in args:
        background = "   (in the background)" if args.get("run_in_background") else ""
        return f"$ {compact(str(args['command']))}{background}"
    return str(action["raw_action_string"])


def compact(text: str) -> str:
    """The first lines of a text, indented under its label, and how many more there are."""
    lines = text.splitlines() or [""]
    shown = "\n    ".join(lines[:SHOWN_LINES])
    if len(lines) > SHOWN_LINES:
        shown += f"\n    ...({len(lines) - SHOWN_LINES} more lines)"
    return shown
