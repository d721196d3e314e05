"""TurnHandler: lines made on a running event loop go out together when the loop's turn ends, in the
order they were made, before anything the handler writes later; elsewhere they go out at once."""

import asyncio
import io
import json
import logging
import re
from collections.abc import Iterator
from typing import Any

import pytest

from reactstep.service.logs.lines import JsonFormatter, LineFormatter
from reactstep.service.logs.writing import MAX_HELD, TurnHandler, log_line


class Verbatim(LineFormatter):
    """Each line is its message."""

    def line(self, created: float, level: str, name: str, message: str, *rest: Any) -> str:
        return message


VERBATIM = Verbatim()


def write_line(handler: TurnHandler, text: str) -> None:
    handler.write_line(VERBATIM, 0.0, "INFO", "reactstep.http", text, None, {})


class Writes(io.StringIO):
    """A stream that keeps each write call apart."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[str] = []

    def write(self, text: str) -> int:
        self.calls.append(text)
        return super().write(text)


@pytest.fixture
def handler() -> Iterator[TurnHandler]:
    handler = TurnHandler(Writes())
    yield handler
    handler.close()


def calls(handler: TurnHandler) -> list[str]:
    stream = handler.stream
    assert isinstance(stream, Writes)
    return stream.calls


def test_lines_of_one_turn_go_out_in_one_write_when_it_ends(handler: TurnHandler) -> None:
    async def turn() -> list[str]:
        for n in range(3):
            write_line(handler, f"line {n}")
        held = calls(handler)[:]
        await asyncio.sleep(0)  # the turn ends
        return held

    assert asyncio.run(turn()) == []
    assert calls(handler) == ["line 0\nline 1\nline 2\n"]


def test_nothing_overtakes_a_held_line(handler: TurnHandler) -> None:
    handler.setFormatter(logging.Formatter("%(message)s"))
    logger = logging.getLogger("reactstep.test_turn_handler")
    logger.addHandler(handler)
    logger.propagate = False

    async def turn() -> None:
        write_line(handler, "request 1")
        logger.warning("a record made after it")
        write_line(handler, "request 2")
        handler.flush()
        write_line(handler, "request 3")

    try:
        asyncio.run(turn())  # the loop's last pass writes the third
    finally:
        logger.removeHandler(handler)
    assert calls(handler) == ["request 1\n", "a record made after it\n", "request 2\n", "request 3\n"]


def test_without_a_loop_a_line_goes_out_at_once(handler: TurnHandler) -> None:
    write_line(handler, "from a thread with no loop")
    assert calls(handler) == ["from a thread with no loop\n"]


def test_at_most_max_held_lines_wait(handler: TurnHandler) -> None:
    async def turn() -> int:
        for n in range(MAX_HELD):
            write_line(handler, str(n))
        return len(calls(handler))

    assert asyncio.run(turn()) == 1  # the last one made it MAX_HELD: all went out then
    assert "".join(calls(handler)).split() == [str(n) for n in range(MAX_HELD)]


def test_lines_of_two_loops_each_go_out(handler: TurnHandler) -> None:
    async def one_line(text: str) -> None:
        write_line(handler, text)

    asyncio.run(one_line("first loop"))
    asyncio.run(one_line("second loop"))
    assert calls(handler) == ["first loop\n", "second loop\n"]


def test_a_line_that_cannot_be_made_loses_only_itself(
    handler: TurnHandler, capsys: pytest.CaptureFixture[str]
) -> None:
    class Fails(LineFormatter):
        def line(self, *parts: Any) -> str:
            raise ValueError("no line")

    async def turn() -> None:
        write_line(handler, "before")
        handler.write_line(Fails(), 0.0, "INFO", "reactstep.http", "broken", None, {})
        write_line(handler, "after")

    asyncio.run(turn())
    assert calls(handler) == ["before\nafter\n"]
    assert "no line" in capsys.readouterr().err  # reported as logging reports a failed emit


def test_log_line_writes_through_it_the_line_a_plain_handler_gets() -> None:
    logger = logging.getLogger("reactstep.test_turn_handler.lines")
    logger.setLevel(logging.INFO)
    logger.propagate = False
    fields = {"method": "POST", "route": "/api/agent/execute_action", "status": 200, "project": "naïve"}
    written = []
    for handler in (TurnHandler(io.StringIO()), logging.StreamHandler(io.StringIO())):
        handler.setFormatter(JsonFormatter())
        logger.addHandler(handler)

        async def request() -> None:
            log_line(logger, logging.INFO, "request", "req-1", dict(fields))

        try:
            asyncio.run(request())
        finally:
            logger.removeHandler(handler)
        stream = handler.stream
        assert isinstance(stream, io.StringIO)
        written.append(re.sub(r'"ts":"[^"]+"', '"ts":0', stream.getvalue()))
    assert written[0] == written[1]
    assert json.loads(written[0])["project"] == "naïve"
