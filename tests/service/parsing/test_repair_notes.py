"""Every repair the readers make shows as a note, in the reader's own words."""

import pytest

from reactstep.service.parsing.reply import ParsedAction, parse_reply

TOOLS = {
    "read_file": {
        "type": "object",
        "properties": {"file_path": {"type": "string"}, "start_line": {"type": "integer"}},
        "required": ["file_path"],
    },
    "bash": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]},
}
ALIASES = {"read_file": {"path": "file_path"}}


@pytest.mark.parametrize(
    ("text", "action", "notes"),
    [
        pytest.param(
            'Action: read_file(path="a.py")',
            ParsedAction("read_file", {"file_path": "a.py"}, 'Action: read_file(path="a.py")'),
            ("Argument 'path' was read as 'file_path'.",),
            id="declared-alias",
        ),
        pytest.param(
            'Action: read_file(File_Path="a.py")',
            ParsedAction("read_file", {"file_path": "a.py"}, 'Action: read_file(File_Path="a.py")'),
            ("Argument 'File_Path' was read as 'file_path'.",),
            id="same-spelling",
        ),
        pytest.param(
            'Action: Read-File(file_path="a.py")',
            ParsedAction("read_file", {"file_path": "a.py"}, 'Action: Read-File(file_path="a.py")'),
            ("Tool 'Read-File' was read as 'read_file'.",),
            id="tool-spelling",
        ),
        pytest.param(
            'Action: bash\nAction Input: "ls -la',
            ParsedAction("bash", {"command": "ls -la"}, 'Action: bash\nAction Input: "ls -la'),
            ("The unbalanced quote opening the Action Input was dropped.",),
            id="lone-quote",
        ),
        pytest.param(
            "Action: bash\nAction Input: **ls -la**",
            ParsedAction("bash", {"command": "ls -la"}, "Action: bash\nAction Input: **ls -la**"),
            ("Markdown emphasis around the Action Input was dropped.",),
            id="emphasis",
        ),
        pytest.param(
            'Action: read_file\nAction Input: {"file_path": "a.py"} to see it',
            ParsedAction(
                "read_file",
                {"file_path": "a.py"},
                'Action: read_file\nAction Input: {"file_path": "a.py"} to see it',
            ),
            ("Text after the Action Input's JSON was dropped: 'to see it'.",),
            id="text-after-json",
        ),
        pytest.param(
            'Action: read_file\nAction Input: ReadTool({"file_path": "a.py"})',
            ParsedAction(
                "read_file",
                {"file_path": "a.py"},
                'Action: read_file\nAction Input: ReadTool({"file_path": "a.py"})',
            ),
            ("The Action Input wrapped its JSON in ReadTool(...); the JSON inside was used.",),
            id="wrapped-json",
        ),
        pytest.param(
            '{"name": "read_file", "arguments": {"file_path": "a.py" /* why */}}',
            ParsedAction(
                "read_file",
                {"file_path": "a.py"},
                '{"name": "read_file", "arguments": {"file_path": "a.py" /* why */}}',
            ),
            (
                "The JSON was not valid (Expecting ',' delimiter: line 1 column 57 (char 56)); "
                "it was repaired.",
            ),
            id="json-repair",
        ),
        pytest.param(
            "Thought: list\n```bash\nls\n```",
            ParsedAction("bash", {"command": "ls"}, "```bash\nls\n```"),
            ("The ```bash block was read as a call of bash.",),
            id="shell-fence",
        ),
        pytest.param(
            "Action: bash\nAction Input: ls\nObs",
            ParsedAction("bash", {"command": "ls"}, "Action: bash\nAction Input: ls"),
            ("The unfinished 'Obs' ending the reply was dropped.",),
            id="partial-observation",
        ),
    ],
)
def test_each_repair_is_a_note(text: str, action: ParsedAction, notes: tuple[str, ...]) -> None:
    reply = parse_reply(text, TOOLS, ALIASES)
    assert (reply.action, reply.notes) == (action, notes)


def test_a_strict_reply_has_no_notes() -> None:
    assert parse_reply('Action: read_file(file_path="a.py")', TOOLS, ALIASES).notes == ()
