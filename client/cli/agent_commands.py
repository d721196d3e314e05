"""The agent commands: ask (the reference client's ReAct loop) and replay (a recorded trace, re-run)."""

import argparse
import json
import sys
from contextlib import ExitStack
from pathlib import Path
from typing import Any, TypeAlias

import httpx

from reactstep.client.agent.loop import ToolRunner
from reactstep.client.api.errors import ClientError
from reactstep.client.cli.console import StepPrinter
from reactstep.client.cli.exit_codes import FAILED, NO_ANSWER, OK, USAGE
from reactstep.client.cli.servers import in_process_llm_problem, server_for
from reactstep.client.library import Client
from reactstep.client.settings import ClientSettings
from reactstep.client.traces.format import ReplayMismatch, load_trace

TOOL_CALLING = ("text", "native", "auto")
READINESS_TIMEOUT_S = 10.0
Commands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"


class LLMNotConfigured(ClientError):
    """No LLM the question could be sent to; said before any call."""


def add_agent_commands(commands: Commands) -> None:
    """The ask and replay commands."""
    ask = commands.add_parser("ask", help="answer a question with the ReAct loop")
    ask.add_argument("question")
    ask.add_argument("--project", required=True, help="project id")
    ask.add_argument(
        "--server", help="server URL (default: the server running on this data dir, else one in this process)"
    )
    ask.add_argument("--record", type=Path, help="write the trace to this JSON-lines file")
    ask.add_argument("--max-iterations", type=int, default=10)
    ask.add_argument("--model", help="litellm model name for this question")
    ask.add_argument("--tool-calling", choices=TOOL_CALLING, help="text, native or auto (default: server's)")
    ask.add_argument(
        "--reply-format",
        choices=("react", "native_text"),
        help="native_text: a reply with no call is the answer (open models that answer in plain text)",
    )
    ask.add_argument("--stream", action="store_true", help="show each thought as the model writes it")
    _add_shell_options(ask, "let the model run shell commands here, in --cwd (bash, bash_output, kill_bash)")
    ask.add_argument(
        "--approve-all",
        action="store_true",
        help="apply every change a write tool proposes without asking (by default each diff is shown "
        "and you are asked; without a terminal on stdin, changes are refused)",
    )
    ask.set_defaults(run=_ask)

    replay_cmd = commands.add_parser("replay", help="re-run a recorded trace and compare")
    replay_cmd.add_argument("trace", type=Path)
    replay_cmd.add_argument(
        "--server", help="server URL (default: the server running on this data dir, else one in this process)"
    )
    replay_cmd.add_argument("--tool-calling", choices=TOOL_CALLING, help="replay in this mode (either works)")
    replay_cmd.add_argument("--stream", action="store_true", help="replay with streamed steps")
    replay_cmd.add_argument(
        "--ignore-version",
        action="store_true",
        help="replay even when the project's files differ from those the trace started from",
    )
    replay_cmd.add_argument(
        "--from-step", type=int, metavar="N", help="with --live: replay steps 1..N, then ask the live LLM"
    )
    replay_cmd.add_argument(
        "--live",
        action="store_true",
        help="after --from-step N, continue with the configured LLM (or --model)",
    )
    replay_cmd.add_argument("--model", help="with --live: the litellm model that continues the run")
    replay_cmd.add_argument("--report", type=Path, help="write the replay's JSON report here")
    _add_shell_options(
        replay_cmd, "run the trace's shell commands again, here in --cwd (needed when it has some)"
    )
    replay_cmd.set_defaults(run=_replay)


def _add_shell_options(command: argparse.ArgumentParser, allow_help: str) -> None:
    command.add_argument("--allow-shell", action="store_true", help=allow_help)
    command.add_argument("--cwd", type=Path, help="where shell commands run (default: the current directory)")


def _ask(args: argparse.Namespace) -> int:
    from reactstep.client.agent.approvals import terminal_approver

    llm_config = {"model": args.model, "tool_calling": args.tool_calling, "reply_format": args.reply_format}
    with ExitStack() as stack:
        settings: ClientSettings = args.settings
        server_url = _server_with_an_llm(stack, args.server, args.model, settings)
        printer = StepPrinter()
        client = stack.enter_context(Client(server_url, settings.api_key))
        stack.callback(printer.end_line)  # an error line never starts after a half-printed thought
        outcome = client.run(
            args.question,
            project=args.project,
            tools=_shell_declarations(args.allow_shell),
            on_action=_local_shell(stack, args.cwd or Path.cwd()) if args.allow_shell else None,
            approve=terminal_approver(args.approve_all, sys.stdin, sys.stdout),
            max_steps=args.max_iterations,
            trace=args.record,
            llm={key: value for key, value in llm_config.items() if value},
            stream=args.stream,
            on_thought=printer.show_thought,
            on_step=printer,
        )
    print(f"\n{outcome.status} after {outcome.steps} steps")
    return OK if outcome.status == "final_answer" else NO_ANSWER


def _replay(args: argparse.Namespace) -> int:
    """Exit 0 when the replay matched, 1 when it diverged (or could not run), 2 for a usage error."""
    # imported here: replay and its scripted LLM server (http.server, difflib) cost every command ~9 ms
    from reactstep.client.replay import recorded_replies, replay
    from reactstep.client.traces.scripted_llm import ScriptedLLMServer

    if args.live != (args.from_step is not None) or (args.from_step is not None and args.from_step < 0):
        print("reactstep replay: --from-step N and --live go together (N >= 0)", file=sys.stderr)
        return USAGE
    try:
        records = load_trace(args.trace)
    except (ReplayMismatch, ValueError, OSError) as exc:
        print(f"reactstep replay: {exc}", file=sys.stderr)
        return USAGE
    if records[0].get("client_tools") and not args.allow_shell:
        names = ", ".join(tool["name"] for tool in records[0]["client_tools"])
        raise ReplayMismatch(f"the trace runs client tools ({names}) on this machine; pass --allow-shell")
    live = ({"model": args.model} if args.model else {}) if args.live else None
    settings: ClientSettings = args.settings
    with ExitStack() as stack:
        run_tool = _local_shell(stack, args.cwd or Path.cwd()) if args.allow_shell else None
        llm = stack.enter_context(ScriptedLLMServer(recorded_replies(records, args.from_step)))
        overrides = {"llm_api_base_allowlist": [llm.base_url]}
        server_url = server_for(stack, args.server, settings, overrides).url
        if not args.ignore_version:
            _check_pinned_version(stack, server_url, records[0], settings.api_key)
        report = replay(
            records,
            server_url,
            llm,
            args.tool_calling,
            args.stream,
            run_tool,
            settings.api_key,
            from_step=args.from_step,
            live=live,
        )
    if args.report:
        args.report.write_text(json.dumps(report.to_json(), indent=1) + "\n")
    print(report.explain())
    return OK if report.ok else FAILED


def _server_with_an_llm(
    stack: ExitStack, named: str | None, model: str | None, settings: ClientSettings
) -> str:
    """The server to ask, once it is clear that it can call an LLM: checked before any call."""

    def llm_configured() -> None:
        if (problem := in_process_llm_problem(model)) is not None:
            raise LLMNotConfigured(problem)

    server = server_for(stack, named, settings, before_start=llm_configured)
    url = server.url
    if server.origin != "in process" and model is None and _llm_check(url) == "unconfigured":
        raise LLMNotConfigured(
            f"the server at {url} has no LLM configured: set REACTSTEP_LLM_MODEL and REACTSTEP_LLM_API_BASE "
            "(or REACTSTEP_LLM_API_KEY) where it runs, or pass --model with a provider whose key it holds"
        )
    return url


def _llm_check(url: str) -> str | None:
    """What the server's /readyz says of its default LLM; None when it does not say."""
    try:
        checks = httpx.get(f"{url}/readyz", timeout=READINESS_TIMEOUT_S).json().get("checks", {})
    except (httpx.HTTPError, ValueError, AttributeError):
        return None  # the question itself will meet whatever is wrong, with its own error
    return checks.get("llm") if isinstance(checks, dict) else None


def _check_pinned_version(
    stack: ExitStack, server_url: str, session: dict[str, Any], key: str | None
) -> None:
    from reactstep.client.traces.pinning import check_pinned_version

    client = stack.enter_context(Client(server_url, key))
    note = client.do(check_pinned_version(session))
    if note is not None:
        print(note, file=sys.stderr)


def _shell_declarations(allow_shell: bool) -> list[dict[str, Any]]:
    from reactstep.client.shell.tools import shell_tool_declarations

    return shell_tool_declarations() if allow_shell else []


def _local_shell(stack: ExitStack, cwd: Path) -> ToolRunner:
    """The shell tools, run in cwd; their background commands stop when the stack closes or on SIGTERM."""
    from reactstep.client.shell.processes import exit_on_termination_signals
    from reactstep.client.shell.tools import LocalShell

    if not cwd.is_dir():
        raise ClientError(f"--cwd {cwd} is not a directory")
    stack.enter_context(exit_on_termination_signals())
    return stack.enter_context(LocalShell(cwd.resolve())).run
