"""parse_reply: every accepted reply format, and every way a reply is refused."""

from typing import Any

import pytest

from reactstep.service.parsing.reply import FormatError, ParsedAction, ParsedReply, parse_reply

TOOLS: dict[str, dict[str, Any]] = {
    "read_file": {
        "type": "object",
        "properties": {
            "file_path": {"type": "string"},
            "start_line": {"type": "integer"},
            "end_line": {"type": "integer"},
        },
        "required": ["file_path"],
    },
    "code_search": {
        "type": "object",
        "properties": {"query": {"type": "string"}, "max_results": {"type": "integer"}},
        "required": ["query"],
    },
    "list_files": {
        "type": "object",
        "properties": {"path": {"type": "string"}, "recursive": {"type": "boolean"}},
    },
    # A client tool: the parser treats it like any other.
    "bash": {
        "type": "object",
        "properties": {"command": {"type": "string"}, "timeout": {"type": "integer"}},
        "required": ["command"],
    },
    # "value" accepts anything, so literal shapes (null, lists, dicts) reach the result unchanged.
    "remember": {
        "type": "object",
        "properties": {"key": {"type": "string"}, "value": {}},
        "required": ["key", "value"],
    },
}


def act(thought: str, tool: str, args: dict[str, Any], raw: str) -> ParsedReply:
    return ParsedReply(thought, ParsedAction(tool, args, raw), None)


def final(thought: str, answer: str) -> ParsedReply:
    return ParsedReply(thought, None, answer)


CALL_SYNTAX = [
    pytest.param(
        'Thought: I should read it.\nAction: read_file(file_path="src/app.py", start_line=3)',
        act(
            "I should read it.",
            "read_file",
            {"file_path": "src/app.py", "start_line": 3},
            'Action: read_file(file_path="src/app.py", start_line=3)',
        ),
        id="canonical",
    ),
    pytest.param(
        "Action: list_files()",
        act("", "list_files", {}, "Action: list_files()"),
        id="no-args-no-thought",
    ),
    pytest.param(
        'Action: read_file("a.py", 10, 20)',
        act(
            "",
            "read_file",
            {"file_path": "a.py", "start_line": 10, "end_line": 20},
            'Action: read_file("a.py", 10, 20)',
        ),
        id="positional",
    ),
    pytest.param(
        'Action: code_search("foo", max_results=5)',
        act(
            "",
            "code_search",
            {"query": "foo", "max_results": 5},
            'Action: code_search("foo", max_results=5)',
        ),
        id="positional-then-keyword",
    ),
    pytest.param(
        "Action: bash(command='ls -la')",
        act("", "bash", {"command": "ls -la"}, "Action: bash(command='ls -la')"),
        id="single-quotes",
    ),
    pytest.param(
        'Thought: write it\nAction: bash(command="""cat <<EOF\nsay "hi" (twice)\nEOF""", timeout=30)',
        act(
            "write it",
            "bash",
            {"command": 'cat <<EOF\nsay "hi" (twice)\nEOF', "timeout": 30},
            'Action: bash(command="""cat <<EOF\nsay "hi" (twice)\nEOF""", timeout=30)',
        ),
        id="triple-double-quotes-multiline",
    ),
    pytest.param(
        "Action: bash(command='''it's \"quoted\"\n''')",
        act(
            "",
            "bash",
            {"command": 'it\'s "quoted"\n'},
            "Action: bash(command='''it's \"quoted\"\n''')",
        ),
        id="triple-single-quotes",
    ),
    pytest.param(
        'Action: read_file(\n    file_path="a.py",  # the entry point (main\n    start_line=1,\n)',
        act(
            "",
            "read_file",
            {"file_path": "a.py", "start_line": 1},
            'Action: read_file(\n    file_path="a.py",  # the entry point (main\n    start_line=1,\n)',
        ),
        id="call-over-lines-with-comment",
    ),
    pytest.param(
        'Action: bash(command="echo \\"a\\" \\\\ \\n")',
        act(
            "",
            "bash",
            {"command": 'echo "a" \\ \n'},
            'Action: bash(command="echo \\"a\\" \\\\ \\n")',
        ),
        id="escapes",
    ),
    pytest.param(
        'Action: remember(key="n", value=[-1, 2.5, -0.5, +3, 1e3])',
        act(
            "",
            "remember",
            {"key": "n", "value": [-1, 2.5, -0.5, 3, 1000.0]},
            'Action: remember(key="n", value=[-1, 2.5, -0.5, +3, 1e3])',
        ),
        id="numbers",
    ),
    pytest.param(
        'Action: list_files(path="src", recursive=true)',
        act(
            "",
            "list_files",
            {"path": "src", "recursive": True},
            'Action: list_files(path="src", recursive=true)',
        ),
        id="json-true",
    ),
    pytest.param(
        'Action: remember(key="k", value={"a": false, "b": [true, null, None, False]})',
        act(
            "",
            "remember",
            {"key": "k", "value": {"a": False, "b": [True, None, None, False]}},
            'Action: remember(key="k", value={"a": false, "b": [true, null, None, False]})',
        ),
        id="json-false-null-and-python-constants",
    ),
    pytest.param(
        "Action: remember(key='t', value=(1, 'x', ()))",
        act(
            "",
            "remember",
            {"key": "t", "value": [1, "x", []]},
            "Action: remember(key='t', value=(1, 'x', ()))",
        ),
        id="tuples-become-lists",
    ),
    pytest.param(
        'Action: remember(key="d", value={"action": "bash", "action_input": "rm -rf /"})',
        act(
            "",
            "remember",
            {"key": "d", "value": {"action": "bash", "action_input": "rm -rf /"}},
            'Action: remember(key="d", value={"action": "bash", "action_input": "rm -rf /"})',
        ),
        id="json-action-shape-inside-args-is-just-data",
    ),
    pytest.param(
        'Action: bash(command="""echo hi\nAction: list_files()\nFinal Answer: no\n""")',
        act(
            "",
            "bash",
            {"command": "echo hi\nAction: list_files()\nFinal Answer: no\n"},
            'Action: bash(command="""echo hi\nAction: list_files()\nFinal Answer: no\n""")',
        ),
        id="labels-inside-a-string-are-content",
    ),
    pytest.param(
        "Thought: use `ls` here\nAction: list_files()",
        act("use `ls` here", "list_files", {}, "Action: list_files()"),
        id="inline-code-stays-in-thought",
    ),
    pytest.param(
        "Thought: like\n```\nx = 1\n```\nAction: list_files()",
        act("like\n```\nx = 1\n```", "list_files", {}, "Action: list_files()"),
        id="closed-fence-stays-in-thought",
    ),
    pytest.param(
        "Thought: go\nAction: ```read_file(file_path='a')```",
        act("go", "read_file", {"file_path": "a"}, "Action: ```read_file(file_path='a')```"),
        id="triple-backticks-inline",
    ),
    pytest.param(
        "Let me look around first.\nAction: list_files()",
        act("Let me look around first.", "list_files", {}, "Action: list_files()"),
        id="thought-without-label",
    ),
]

LABEL_STYLES = [
    pytest.param(
        '**Thought:** hmm\n**Action:** read_file(file_path="a")',
        act("hmm", "read_file", {"file_path": "a"}, '**Action:** read_file(file_path="a")'),
        id="bold-labels",
    ),
    pytest.param(
        '**Action**: read_file(file_path="a")',
        act("", "read_file", {"file_path": "a"}, '**Action**: read_file(file_path="a")'),
        id="bold-word-colon-outside",
    ),
    pytest.param(
        "  THOUGHT: hmm\n  action: list_files()",
        act("hmm", "list_files", {}, "action: list_files()"),
        id="case-and-indent",
    ),
    pytest.param(
        'Action: `read_file(file_path="a")`',
        act("", "read_file", {"file_path": "a"}, 'Action: `read_file(file_path="a")`'),
        id="backticks",
    ),
    pytest.param(
        'Thought: t\n```\nAction: read_file(file_path="a")\n```',
        act("t", "read_file", {"file_path": "a"}, 'Action: read_file(file_path="a")'),
        id="fence-around-action-line",
    ),
    pytest.param(
        'Thought: t\nAction:\n```python\nread_file(file_path="a")\n```',
        act("t", "read_file", {"file_path": "a"}, 'Action:\n```python\nread_file(file_path="a")'),
        id="fenced-call-after-label",
    ),
]

ACTION_INPUT = [
    pytest.param(
        'Thought: search\nAction: code_search\nAction Input: {"query": "parse_reply", "max_results": 3}',
        act(
            "search",
            "code_search",
            {"query": "parse_reply", "max_results": 3},
            'Action: code_search\nAction Input: {"query": "parse_reply", "max_results": 3}',
        ),
        id="json-object",
    ),
    pytest.param(
        "Action: bash\nAction Input: ls -la src\n",
        act("", "bash", {"command": "ls -la src"}, "Action: bash\nAction Input: ls -la src"),
        id="plain-text-to-first-required",
    ),
    pytest.param(
        "Action: code_search\nAction Input: where is main defined",
        act(
            "",
            "code_search",
            {"query": "where is main defined"},
            "Action: code_search\nAction Input: where is main defined",
        ),
        id="plain-text-to-first-required-of-several",
    ),
    pytest.param(
        'Action: read_file\nAction Input: "src/app.py"',
        act(
            "",
            "read_file",
            {"file_path": "src/app.py"},
            'Action: read_file\nAction Input: "src/app.py"',
        ),
        id="json-string",
    ),
    pytest.param(
        'Action: read_file\n\nAction Input:\n```json\n{"file_path": "a.py"}\n```',
        act(
            "",
            "read_file",
            {"file_path": "a.py"},
            'Action: read_file\n\nAction Input:\n```json\n{"file_path": "a.py"}\n```',
        ),
        id="fenced-json-after-blank-line",
    ),
    pytest.param(
        "**Action:** `bash`\n**Action Input:** `echo ok`",
        act("", "bash", {"command": "echo ok"}, "**Action:** `bash`\n**Action Input:** `echo ok`"),
        id="bold-and-backticks",
    ),
    pytest.param(
        "Action: list_files",
        act("", "list_files", {}, "Action: list_files"),
        id="no-input-means-no-args",
    ),
    pytest.param(
        'Thought: done\nAction: Final Answer\nAction Input: "All tests pass."',
        final("done", "All tests pass."),
        id="final-answer-as-action",
    ),
]

JSON_BLOBS = [
    pytest.param(
        'I will read it.\n```json\n{"action": "read_file", "action_input": {"file_path": "a.py"}}\n```',
        act(
            "I will read it.",
            "read_file",
            {"file_path": "a.py"},
            '{"action": "read_file", "action_input": {"file_path": "a.py"}}',
        ),
        id="fenced-json",
    ),
    pytest.param(
        '```\n{"action": "bash", "action_input": "ls"}\n```',
        act("", "bash", {"command": "ls"}, '{"action": "bash", "action_input": "ls"}'),
        id="plain-fence-text-input",
    ),
    pytest.param(
        'Thought: go\n{"name": "code_search", "arguments": {"query": "x"}}',
        act(
            "go",
            "code_search",
            {"query": "x"},
            '{"name": "code_search", "arguments": {"query": "x"}}',
        ),
        id="bare-name-arguments",
    ),
    pytest.param(
        '{"name": "bash", "arguments": "{\\"command\\": \\"ls\\", \\"timeout\\": 5}"}',
        act(
            "",
            "bash",
            {"command": "ls", "timeout": 5},
            '{"name": "bash", "arguments": "{\\"command\\": \\"ls\\", \\"timeout\\": 5}"}',
        ),
        id="json-encoded-arguments",
    ),
    pytest.param(
        'Reading.\n{\n  "action": "read_file",\n  "action_input": {"file_path": "b.py", "end_line": 9}\n}',
        act(
            "Reading.",
            "read_file",
            {"file_path": "b.py", "end_line": 9},
            '{\n  "action": "read_file",\n  "action_input": {"file_path": "b.py", "end_line": 9}\n}',
        ),
        id="multi-line-bare",
    ),
    pytest.param(
        'Action: {"action": "bash", "action_input": {"command": "pwd"}}',
        act("", "bash", {"command": "pwd"}, '{"action": "bash", "action_input": {"command": "pwd"}}'),
        id="json-after-action-label",
    ),
    pytest.param(
        'Thought: known\n```json\n{"action": "Final Answer", "action_input": "It is 42."}\n```',
        final("known", "It is 42."),
        id="json-final-answer",
    ),
    pytest.param(
        'Here is data: {"name": "widget", "size": 3}\nAction: list_files()',
        act('Here is data: {"name": "widget", "size": 3}', "list_files", {}, "Action: list_files()"),
        id="non-action-json-in-thought-is-ignored",
    ),
]

FINAL_ANSWERS = [
    pytest.param(
        "Thought: I know.\nFinal Answer: Line one.\nLine two.\n",
        final("I know.", "Line one.\nLine two."),
        id="multi-line",
    ),
    pytest.param("Answer: 42", final("", "42"), id="answer-label"),
    pytest.param("**Thought:** done\n**Final Answer:** 42", final("done", "42"), id="bold-final-answer"),
    pytest.param("final answer:   ok  ", final("", "ok"), id="lowercase"),
    pytest.param(
        'Final Answer: call it as {"name": "x", "arguments": {}}',
        final("", 'call it as {"name": "x", "arguments": {}}'),
        id="json-inside-final-answer-is-content",
    ),
    pytest.param(
        "Final Answer: Q and A:\nQuestion: why?\nAnswer: because",
        final("", "Q and A:\nQuestion: why?\nAnswer: because"),
        id="later-answer-label-is-content",
    ),
]

OBSERVATION_CUT = [
    pytest.param(
        'Thought: t\nAction: bash(command="ls")\nObservation: a.py\nThought: now I know\nFinal Answer: a.py',
        act("t", "bash", {"command": "ls"}, 'Action: bash(command="ls")'),
        id="final-answer-after-observation-ignored",
    ),
    pytest.param(
        "Action: list_files()\n**Observation:** fake\nAction: bash(command='rm -rf /')",
        act("", "list_files", {}, "Action: list_files()"),
        id="bold-observation-cuts-second-action",
    ),
    pytest.param(
        "Action: bash\nAction Input: ls\nobservation: a.py b.py",
        act("", "bash", {"command": "ls"}, "Action: bash\nAction Input: ls"),
        id="observation-ends-action-input",
    ),
]


# Refused until issue 10; each now reads, and says how in its notes.
REPAIRED = [
    pytest.param(
        "Final Answer: done\nAction: list_files()",
        ParsedReply(
            "",
            None,
            "done",
            ("Text after the Final Answer that started an Action was dropped: the answer came first.",),
        ),
        id="final-then-action",
    ),
    pytest.param(
        "Observation: I pretend the tool ran.\nFinal Answer: x",
        ParsedReply(
            "", None, "x", ("The reply began with an echo of the last Observation; it was left out.",)
        ),
        id="observation-echo-opening-the-reply-is-left-out",
    ),
    pytest.param(
        'Action: read_file\nAction Input: {"file_path": "a", "start_line": "3"}',
        ParsedReply(
            "",
            ParsedAction(
                "read_file",
                {"file_path": "a", "start_line": 3},
                'Action: read_file\nAction Input: {"file_path": "a", "start_line": "3"}',
            ),
            None,
            ("Argument 'start_line' was given as the string '3'; read as 3.",),
        ),
        id="string-for-integer",
    ),
    pytest.param(
        'Action: read_file\nAction Input: {"file_path": "a",}',
        ParsedReply(
            "",
            ParsedAction(
                "read_file", {"file_path": "a"}, 'Action: read_file\nAction Input: {"file_path": "a",}'
            ),
            None,
            (
                "The JSON was not valid (Expecting property name enclosed in double quotes: "
                "line 1 column 19 (char 18)); it was read as a Python literal.",
            ),
        ),
        id="trailing-comma",
    ),
    pytest.param(
        '{"name": "bash", "arguments": "ls"}',
        ParsedReply(
            "",
            ParsedAction("bash", {"command": "ls"}, '{"name": "bash", "arguments": "ls"}'),
            None,
            ('"arguments" held text, not an object; it is the tool\'s one input.',),
        ),
        id="text-arguments",
    ),
    pytest.param(
        '{"action": "bash", "action_input": 5}',
        ParsedReply(
            "",
            ParsedAction("bash", {"command": "5"}, '{"action": "bash", "action_input": 5}'),
            None,
            (
                "The input 5 was given to 'command'.",
                "Argument 'command' was given as the number 5; read as '5'.",
            ),
        ),
        id="numeric-action-input",
    ),
]


@pytest.mark.parametrize(
    ("text", "expected"),
    CALL_SYNTAX + LABEL_STYLES + ACTION_INPUT + JSON_BLOBS + FINAL_ANSWERS + OBSERVATION_CUT + REPAIRED,
)
def test_parse_reply_accepts(text: str, expected: ParsedReply) -> None:
    assert parse_reply(text, TOOLS) == expected


DEEP_LIST = "[" * 25 + "]" * 25

REFUSALS = [
    pytest.param(
        'Action: list_files()\nAction: bash(command="ls")',
        "Your reply contains 2 actions",
        id="two-actions",
    ),
    pytest.param(
        'Action: list_files()\n{"action": "bash", "action_input": "ls"}',
        "Your reply contains 2 actions",
        id="call-and-json-action",
    ),
    pytest.param(
        "Action: bash\nAction Input: ls\nAction: list_files()",
        "Your reply contains 2 actions",
        id="two-langchain-actions",
    ),
    pytest.param(
        "Action: list_files()\nFinal Answer: done",
        "both an Action and a Final Answer",
        id="action-then-final",
    ),
    pytest.param(
        'Action: list_files()\n{"action": "Final Answer", "action_input": "x"}',
        "both an Action and a Final Answer",
        id="action-and-json-final",
    ),
    pytest.param(
        "I am still thinking about it.",
        'No action or final answer found. Reply with `Action: tool_name(arg="value")`',
        id="neither",
    ),
    pytest.param("", "or `Final Answer: ...` when you are done", id="empty"),
    pytest.param(
        '{"action": "remember", "action_input": {"key": "k", "value": NaN}}',
        "A JSON action was found but is not valid",
        id="json-nan",
    ),
    pytest.param(
        "Action: delete_everything()",
        "Unknown tool 'delete_everything'. Available tools: bash, code_search, list_files, "
        "read_file, remember.",
        id="unknown-tool",
    ),
    pytest.param(
        '{"name": "shell", "arguments": {}}',
        "Unknown tool 'shell'. Available tools: bash,",
        id="unknown-json-tool",
    ),
    pytest.param(
        'Action: read_file(file_path="a", start_line="x")',
        "read_file: argument 'start_line' must be integer, got \"x\"",
        id="wrong-type",
    ),
    pytest.param(
        'Action: read_file(file_path="a", start_line=True)',
        "read_file: argument 'start_line' must be integer, got true",
        id="bool-is-not-integer",
    ),
    pytest.param(
        'Action: list_files(recursive="yes")',
        "list_files: argument 'recursive' must be boolean, got \"yes\"",
        id="wrong-type-boolean",
    ),
    pytest.param(
        "Action: read_file(start_line=1)",
        "read_file: missing required argument 'file_path'",
        id="missing-argument",
    ),
    pytest.param(
        'Action: read_file(file_path="a", line=3)',
        "read_file: unknown argument 'line' (valid: file_path, start_line, end_line)",
        id="unknown-argument",
    ),
    pytest.param(
        "Action: read_file(file_path=open('x'))",
        "Arguments must be literal values (strings, numbers, True/False/None, lists or dicts); "
        "'file_path' is a function call.",
        id="call-argument",
    ),
    pytest.param(
        'Action: read_file(file_path=__import__("os").system("x"))',
        "'file_path' is a function call",
        id="import-argument",
    ),
    pytest.param(
        'Action: __import__("os").system("x")',
        'An Action must be one tool call such as tool_name(arg="value").',
        id="import-as-action",
    ),
    pytest.param("Action: read_file(file_path=path)", "'file_path' is the name 'path'", id="name"),
    pytest.param(
        "Action: read_file(file_path=os.environ)",
        "'file_path' is an attribute access",
        id="attribute",
    ),
    pytest.param('Action: read_file(file_path=f"{x}")', "'file_path' is an f-string", id="f-string"),
    pytest.param("Action: read_file(file_path=lambda: 1)", "'file_path' is a lambda", id="lambda"),
    pytest.param('Action: read_file(file_path=b"a")', "'file_path' is a bytes literal", id="bytes"),
    pytest.param('Action: read_file("a", 1 + 2)', "argument 2 is an expression", id="arithmetic"),
    pytest.param("Action: remember(key='k', value={1, 2})", "'value' is an expression", id="set"),
    pytest.param("Action: remember(key='k', value={1: 2})", "Dict keys must be strings", id="int-key"),
    pytest.param("Action: read_file(**args)", "**kwargs is not allowed", id="double-star"),
    pytest.param("Action: read_file(*args)", "argument 1 is an expression", id="star"),
    pytest.param(
        'Action: read_file(file_path="a", file_path="b")',
        "Argument 'file_path' is given more than once.",
        id="repeated-keyword",
    ),
    pytest.param(
        'Action: read_file("a", file_path="b")',
        "read_file: argument 'file_path' is given twice",
        id="positional-and-keyword",
    ),
    pytest.param(
        'Action: read_file("a", 1, 2, 3)',
        "read_file: takes at most 3 positional argument(s), got 4",
        id="too-many-positional",
    ),
    pytest.param(
        'Action: read_file(file_path="a.py"',
        "The action has unbalanced parentheses",
        id="unbalanced-parens",
    ),
    pytest.param(
        'Action: read_file(file_path="a.py)',
        "The action has an unterminated string literal",
        id="unterminated",
    ),
    pytest.param("Action: read_file(file_path=)", "The action is not valid call syntax: ", id="syntax-error"),
    pytest.param(
        'Action: read_file(file_path="a"]',
        "The action is not valid call syntax",
        id="mismatched-bracket",
    ),
    pytest.param(
        f"Action: remember(key='k', value={DEEP_LIST})",
        "Arguments are nested more than 20 levels deep.",
        id="deep-call",
    ),
    pytest.param(
        f'Action: remember\nAction Input: {{"key": "k", "value": {DEEP_LIST}}}',
        "remember: arguments are nested more than 20 levels deep",
        id="deep-json",
    ),
    pytest.param(
        "Action: read_file(start_line=" + "-" * 5000 + "1)",
        "The action is too complex to parse",
        id="unary-chain",
    ),
    pytest.param("x" * 200_001, "the limit is 200000", id="oversize"),
    pytest.param(
        "Action: list_files\nAction Input: src",
        "list_files: plain-text input is ambiguous for this tool",
        id="plain-text-without-target",
    ),
    pytest.param(
        "Action: I will now read the file",
        'After "Action:" write one tool call',
        id="prose-after-action",
    ),
    pytest.param("Thought: done\nFinal Answer:   ", "Your Final Answer is empty", id="empty-final"),
]


@pytest.mark.parametrize(("text", "message"), REFUSALS)
def test_parse_reply_refuses(text: str, message: str) -> None:
    with pytest.raises(FormatError) as caught:
        parse_reply(text, TOOLS)
    assert message in str(caught.value)
    assert caught.value.reason == str(caught.value)


@pytest.mark.parametrize(
    ("text", "thought"),
    [
        pytest.param("Thought: plan\nAction: list_files()\nAction: list_files()", "plan", id="ambiguous"),
        pytest.param("Thought: just musing", "just musing", id="neither"),
        pytest.param("Thought: try\nAction: read_file(", "try", id="call-syntax"),
        pytest.param("Thought: hmm\nAction: nope()", "hmm", id="unknown-tool"),
        pytest.param('Thought: x\n```json\n{"name": "list_files", "arguments": 1}', "x", id="json"),
        pytest.param("x" * 200_001, "", id="oversize"),
    ],
)
def test_format_error_keeps_thought(text: str, thought: str) -> None:
    with pytest.raises(FormatError) as caught:
        parse_reply(text, TOOLS)
    assert caught.value.thought == thought


def test_no_tools_lists_none() -> None:
    with pytest.raises(FormatError, match="Available tools: none"):
        parse_reply("Action: bash(command='ls')", {})


def test_extra_arguments_allowed_when_schema_says_so() -> None:
    tools = {"open": {"type": "object", "properties": {}, "additionalProperties": True}}
    reply = parse_reply("Action: open(anything=1)", tools)
    assert reply.action == ParsedAction("open", {"anything": 1}, "Action: open(anything=1)")


def test_final_answer_tool_wins_over_final_answer_alias() -> None:
    tools = {"final_answer": {"type": "object", "properties": {"text": {"type": "string"}}}}
    reply = parse_reply('{"action": "final_answer", "action_input": "bye"}', tools)
    assert reply.action == ParsedAction(
        "final_answer", {"text": "bye"}, '{"action": "final_answer", "action_input": "bye"}'
    )


def test_same_input_same_output() -> None:
    text = 'Thought: a\nAction: remember(key="k", value={"b": [1, 2], "a": None})'
    assert parse_reply(text, TOOLS) == parse_reply(text, TOOLS)
