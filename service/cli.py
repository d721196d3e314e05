"""The `reactstep` command: serve, upload, ask (the reference client) and replay."""

import argparse
import sys
import uuid
from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from service.client import AgentClient, ClientError, Question, run_loop
from service.errors import ServiceError
from service.settings import Settings
from service.trace import ReplayMismatch, TraceRecorder, load_trace, recorded_replies, replay

TOOL_CALLING = ("text", "native", "auto")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script."""
    args = _parser().parse_args(argv)
    try:
        code: int = args.run(args)
    except (ClientError, ReplayMismatch, ServiceError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return code


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="reactstep", description=__doc__)
    commands = parser.add_subparsers(required=True, metavar="COMMAND")

    serve = commands.add_parser("serve", help="run the HTTP service")
    serve.add_argument("--host", help="address to bind (default REACTSTEP_HOST or 127.0.0.1)")
    serve.add_argument("--port", type=int, help="port (default REACTSTEP_PORT or 8000)")
    serve.set_defaults(run=_serve)

    upload = commands.add_parser("upload", help="copy a local tree into the object store")
    upload.add_argument("path", type=Path)
    upload.add_argument("--project", required=True, help="project id")
    upload.set_defaults(run=_upload)

    index = commands.add_parser("index", help="upload a local tree and index it for code_search")
    index.add_argument("path", type=Path)
    index.add_argument("--project", required=True, help="project id")
    index.add_argument("--server", help="index through this running server (it owns the vector store)")
    index.set_defaults(run=_index)

    ask = commands.add_parser("ask", help="answer a question with the ReAct loop")
    ask.add_argument("question")
    ask.add_argument("--project", required=True, help="project id")
    ask.add_argument("--server", help="server URL (default: an in-process server)")
    ask.add_argument("--record", type=Path, help="write the trace to this JSON-lines file")
    ask.add_argument("--max-iterations", type=int, default=10)
    ask.add_argument("--model", help="litellm model name for this question")
    ask.add_argument("--tool-calling", choices=TOOL_CALLING, help="text, native or auto (default: server's)")
    ask.add_argument("--stream", action="store_true", help="show each thought as the model writes it")
    ask.set_defaults(run=_ask)

    replay_cmd = commands.add_parser("replay", help="re-run a recorded trace and compare")
    replay_cmd.add_argument("trace", type=Path)
    replay_cmd.add_argument("--server", help="server URL (default: an in-process server)")
    replay_cmd.add_argument("--tool-calling", choices=TOOL_CALLING, help="replay in this mode (either works)")
    replay_cmd.add_argument("--stream", action="store_true", help="replay with streamed steps")
    replay_cmd.set_defaults(run=_replay)
    return parser


def _serve(args: argparse.Namespace) -> int:
    from service.app import create_app
    from service.serving import serve_forever

    settings = Settings()
    host, port = args.host or settings.host, args.port or settings.port
    print(f"reactstep serving on http://{host}:{port} (storage: {settings.storage_backend})")
    serve_forever(create_app(settings), host, port)
    return 0


def _upload(args: argparse.Namespace) -> int:
    from tools.storage import open_store
    from tools.upload import upload_tree

    if not args.path.is_dir():
        print(f"error: {args.path} is not a directory", file=sys.stderr)
        return 2
    settings = Settings()
    store = open_store(settings)
    report = upload_tree(args.path, args.project, store, settings.upload_max_file_bytes)
    print(report.summary())
    return 0


def _index(args: argparse.Namespace) -> int:
    from service.indexing import IndexRequest, IndexResponse, run_index
    from service.progress import ProgressBar
    from service.runtime import build_runtime

    if _upload(args) != 0:
        return 2
    if args.server:
        result = AgentClient(args.server).post(f"/api/projects/{args.project}/index", {})
        report = IndexResponse.model_validate(result)
    else:
        runtime = build_runtime(Settings())
        bar = ProgressBar("indexing")
        try:
            report = run_index(args.project, IndexRequest(), runtime, progress=bar)
        finally:
            bar.finish()
            runtime.vectors.close()
    print(report.summary())
    return 0


def _ask(args: argparse.Namespace) -> int:
    llm_config = {"model": args.model, "tool_calling": args.tool_calling}
    question = Question(
        project_id=args.project,
        session_id=str(uuid.uuid4()),
        user_query=args.question,
        max_iterations=args.max_iterations,
        llm_config={key: value for key, value in llm_config.items() if value},
        stream=args.stream,
    )
    with ExitStack() as stack:
        server_url = args.server or _in_process_server(stack, Settings())
        listener = _Printer()
        if args.record:
            recorder = TraceRecorder(stack.enter_context(args.record.open("w")), question)
            listener = _Printer(recorder)
        outcome = run_loop(AgentClient(server_url), question, listener, listener.show_thought)
    print(f"\n{outcome.status} after {outcome.steps} steps")
    return 0 if outcome.status == "final_answer" else 3


def _replay(args: argparse.Namespace) -> int:
    from service.scripted_llm import ScriptedLLMServer

    records = load_trace(args.trace)
    with ExitStack() as stack:
        llm = stack.enter_context(ScriptedLLMServer(recorded_replies(records)))
        settings = Settings(llm_api_base_allowlist=[llm.base_url])
        server_url = args.server or _in_process_server(stack, settings)
        outcome = replay(records, server_url, llm, args.tool_calling, args.stream)
    print(f"replay matched: {outcome.status} after {outcome.steps} steps")
    return 0


def _in_process_server(stack: ExitStack, settings: Settings) -> str:
    from service.app import create_app
    from service.serving import BackgroundServer

    server = stack.enter_context(BackgroundServer(create_app(settings)))
    return server.url


class _Printer:
    """Prints each step as the loop runs, then hands it on (to a trace recorder)."""

    def __init__(self, then: TraceRecorder | None = None) -> None:
        self._then = then
        self._step = 0
        self._streamed = False  # this step's thought has been printed as it streamed

    def show_thought(self, delta: str) -> None:
        """Print a thought delta as it arrives."""
        if not self._streamed:
            print("    Thought: ", end="")
            self._streamed = True
        print(delta.replace("\n", "\n    "), end="", flush=True)

    def __call__(self, kind: str, request: dict[str, Any], response: dict[str, Any]) -> None:
        if kind == "react_step":
            self._step += 1
            if self._streamed:
                print()
            _print_step(self._step, response, thought_shown=self._streamed)
            self._streamed = False
        else:
            observation = response["observation"]
            lines = observation.splitlines()
            shown = "\n    ".join(lines[:15]) + (
                f"\n    ...({len(lines) - 15} more lines)" if len(lines) > 15 else ""
            )
            print(f"    Observation{' (error)' if response['is_error'] else ''}:\n    {shown}")
        if self._then is not None:
            self._then(kind, request, response)


def _print_step(number: int, response: dict[str, Any], thought_shown: bool = False) -> None:
    print(f"[{number}] {response['status']}")
    if response.get("thought") and not thought_shown:
        print(f"    Thought: {response['thought']}")
    if response.get("action_details"):
        print(f"    {response['action_details']['raw_action_string']}")
    if response.get("format_error"):
        print(f"    (reply could not be parsed) {response['format_error'].splitlines()[0]}")
    if response.get("final_answer") is not None:
        print(f"Final Answer: {response['final_answer']}")
