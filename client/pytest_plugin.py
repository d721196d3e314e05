"""The pytest plugin (entry point `pytest11`: reactstep): recorded traces replayed as tests.

    def test_main_returns_42(reactstep_replay):
        report = reactstep_replay("tests/traces/main.jsonl")
        assert report.ok, report.explain()

reactstep_replay(trace, ...) ─► a server in this process (the server package's in-process hook, on
    loopback, started at the fixture's first use and stopped after the test; `reactstep_replay.url`),
    or the one `server=` names ─► replay.py, strict ─► its Report (ok, diverged_at, part, diffs)
pytest --reactstep-record ─► the trace's question asked again of the server's configured LLM (or
    `llm=`), the trace written anew; the report is ok
Nothing of the server (or of the client beyond this module) is imported until a test uses the fixture.
"""

from collections.abc import Iterator, Mapping, Sequence
from contextlib import ExitStack
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from reactstep.client.agent.loop import ToolRunner
    from reactstep.client.settings import ClientSettings
    from reactstep.client.traces.report import Report

RECORD_OPTION = "--reactstep-record"


def pytest_addoption(parser: pytest.Parser) -> None:
    """--reactstep-record: re-record the traces the tests replay."""
    parser.getgroup("reactstep").addoption(
        RECORD_OPTION,
        action="store_true",
        help="ask each replayed trace's question again of the configured LLM and rewrite the trace",
    )


class TraceReplayer:
    """What the reactstep_replay fixture gives: call it with a trace path to replay it."""

    def __init__(self, record: bool, settings: "ClientSettings") -> None:
        self.record = record
        self._settings = settings
        self._api_key = settings.api_key
        self._stack = ExitStack()
        self._url: str | None = None
        self._llm: Any = None

    @property
    def url(self) -> str:
        """The in-process server's URL (started now if it is not yet), e.g. to create the project."""
        if self._url is None:
            from reactstep.client.cli.servers import in_process_server
            from reactstep.client.traces.scripted_llm import ScriptedLLMServer

            self._llm = self._stack.enter_context(ScriptedLLMServer())
            overrides = {"llm_api_base_allowlist": [self._llm.base_url]}
            self._url = in_process_server(self._stack, self._settings, overrides)
        return self._url

    def __call__(
        self,
        trace: str | PathLike[str],
        *,
        client_tools: Sequence[Mapping[str, Any]] | None = None,
        on_action: "ToolRunner | None" = None,
        llm: Mapping[str, Any] | None = None,
        tool_calling: str | None = None,
        check_version: bool = True,
        question: str | None = None,
        project: str | None = None,
    ) -> "Report":
        """Replay `trace` strictly (or re-record it with --reactstep-record) and report.

        client_tools: the declarations the client sends now (default: the recorded ones); on_action
        runs them. llm: while recording, the llm config to ask (default: the server's own LLM);
        while replaying, overrides of the recorded sampling. check_version: the project must hold
        the files the trace started from. question and project: what to ask when recording a
        trace that does not exist yet.
        """
        from reactstep.client.replay import recorded_replies, replay
        from reactstep.client.traces.format import load_trace

        path = Path(trace)
        url = self.url
        if self.record:
            header = load_trace(path)[0] if path.exists() else {"user_query": question, "project_id": project}
            return self._record(header, path, url, client_tools, on_action, llm)
        records = load_trace(path)
        if check_version:
            from reactstep.client.library import Client
            from reactstep.client.traces.pinning import check_pinned_version

            with Client(url, self._api_key) as client:
                client.do(check_pinned_version(records[0]))
        self._llm.push(*recorded_replies(records))
        return replay(
            records,
            url,
            self._llm,
            tool_calling,
            run_tool=on_action,
            api_key=self._api_key,
            llm_overrides=dict(llm or {}),
            client_tools=None if client_tools is None else [dict(tool) for tool in client_tools],
        )

    def _record(
        self,
        header: dict[str, Any],
        path: Path,
        url: str,
        client_tools: Sequence[Mapping[str, Any]] | None,
        on_action: "ToolRunner | None",
        llm: Mapping[str, Any] | None,
    ) -> "Report":
        from reactstep.client.library import Client
        from reactstep.client.traces.format import TRACE_VERSION
        from reactstep.client.traces.report import Report

        if not header.get("user_query") or not header.get("project_id"):
            raise ValueError(f"{path} does not exist: pass question= and project= to record it")
        recorded = {k: v for k, v in header.get("llm_config", {}).items() if k not in ("model", "api_base")}
        with Client(url, self._api_key) as client:
            outcome = client.run(
                header["user_query"],
                project=header["project_id"],
                tools=list(header.get("client_tools", []) if client_tools is None else client_tools),
                on_action=on_action,
                max_steps=header.get("max_iterations"),
                llm={**recorded, **(llm or {})},
                trace=path,
            )
        note = f"re-recorded {path} ({RECORD_OPTION})"
        return Report(ok=True, format=TRACE_VERSION, steps=outcome.steps, status=outcome.status, notes=[note])

    def close(self) -> None:
        """Stop the in-process server and the scripted LLM."""
        self._stack.close()


@pytest.fixture
def reactstep_replay(request: pytest.FixtureRequest) -> Iterator[TraceReplayer]:
    """Replay a recorded trace against a server in this process: `report = reactstep_replay(path)`."""
    from reactstep.client.settings import ClientSettings

    replayer = TraceReplayer(bool(request.config.getoption(RECORD_OPTION)), ClientSettings.from_env())
    try:
        yield replayer
    finally:
        replayer.close()
