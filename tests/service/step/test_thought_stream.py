"""The streamed thought: the reply's deltas without the label, up to the action or answer."""

import pytest

from reactstep.service.parsing.reply import FormatError, parse_reply
from reactstep.service.step.stream import ThoughtStream

TOOLS = {"read_file": {"type": "object", "properties": {"file_path": {"type": "string"}}}}
READ = 'Action: read_file(file_path="a.py")'


def streamed(text: str, size: int) -> list[str]:
    thought = ThoughtStream()
    deltas = [thought.feed(text[start : start + size]) for start in range(0, len(text), size)]
    return [delta for delta in [*deltas, thought.finish()] if delta]


def parsed_thought(text: str) -> str:
    try:
        return parse_reply(text, TOOLS).thought
    except FormatError as exc:
        return exc.thought


@pytest.mark.parametrize("size", [1, 2, 5, 10_000])
@pytest.mark.parametrize(
    ("text", "thought"),
    [
        (f"Thought: I will read the app.\n{READ}", "I will read the app."),
        (f"Thought:\n  first line\n\nsecond line  \n{READ}", "first line\n\nsecond line"),
        (f"**Thought:** bold label\n**{READ}**", "bold label"),
        (f"thought: lower case\n  {READ}", "lower case"),
        (f"no label at all\n{READ}", "no label at all"),
        (READ, ""),
        ("Thoughts are free.\nFinal Answer: yes", "Thoughts are free."),
        (
            "Thought: Actually, the answer\nAnswering now:\nFinal Answer: 42",
            "Actually, the answer\nAnswering now:",
        ),
        ("Thought: x\nFinal_Answer: 42", "x"),
        ("Thought: made up\nObservation: nothing", "made up"),
        (f"Observation: 3 lines\n\nThought: I read it.\n{READ}", "I read it."),
        (
            f'**Observation:** {{\n  "a": 1\n}}\nThought: an echo, then thought\n{READ}',
            "an echo, then thought",
        ),
        (f"Observation: echoed\n{READ}", ""),
        ("plain native content", "plain native content"),
        ("Thought: ", ""),
        ("", ""),
    ],
)
def test_deltas_add_up_to_the_parsed_thought(text: str, thought: str, size: int) -> None:
    deltas = streamed(text, size)
    assert "".join(deltas) == thought == parsed_thought(text)
    assert not any("Action" in delta or "Final" in delta for delta in deltas)


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ('Thought: x\n```json\n{"action": "read_file"}\n```', "x"),
        ('Thought: x\n{"name": "read_file", "arguments": {}}', "x"),
        ("Thought: x\nAction Input: {}", "x"),
    ],
)
def test_a_json_action_ends_the_thought(text: str, shown: str) -> None:
    assert "".join(streamed(text, 3)) == shown


def test_a_possible_label_is_held_until_it_is_decided() -> None:
    thought = ThoughtStream()
    deltas = ["Thought: a", "\nAct", "ually yes", "\nAction: x()"]
    # "a" could begin "answer:"; "Act" could begin "Action:"
    assert [thought.feed(delta) for delta in deltas] == ["", "a", "\nActually yes", ""]
    assert thought.feed("more") == ""
    assert thought.finish() == ""


CALL = '<tool_call>\n{"name": "read_file", "arguments": {"file_path": "a.py"}}\n</tool_call>'


@pytest.mark.parametrize("size", [1, 3, 10_000])
@pytest.mark.parametrize(
    ("text", "thought"),
    [
        (f"<think>\nI need the file.\n</think>\n\n{CALL}", "I need the file."),
        (f"<think>Plan.</think>\nThought: read it\n{READ}", "Plan.\n\nread it"),
        (f"I need the file.\n</think>\n\nLet me read it.\n{CALL}", "I need the file.\n\nLet me read it."),
        (f"Let me read it.{CALL}", "Let me read it."),
        ("[THINK]Short.[/THINK][TOOL_CALLS]read_file[ARGS]{}", "Short."),
        ("<think>cut off mid-thou", "cut off mid-thou"),
        (
            "<|channel|>analysis<|message|>Need it.<|end|><|start|>assistant<|channel|>commentary"
            ' to=functions.read_file <|constrain|>json<|message|>{"file_path": "a.py"}<|call|>',
            "Need it.",
        ),
        ('[read_file(file_path="a.py")]', ""),
        (
            "<|channel|>analysis<|message|>Plan.<|end|><|start|>assistant<|channel|>commentary<|message|>"
            "Reading it.<|end|><|start|>assistant<|channel|>commentary to=functions.read_file"
            ' <|constrain|>json<|message|>{"file_path": "a.py"}',
            "Plan.\n\nReading it.",
        ),
    ],
)
def test_reasoning_streams_first_and_a_native_call_ends_the_thought(
    text: str, thought: str, size: int
) -> None:
    assert "".join(streamed(text, size)) == thought == parsed_thought(text)


@pytest.mark.parametrize(
    ("text", "thought"),
    [
        ("<think>Easy.</think>It returns 42.", "Easy."),  # the text after it is the answer
        (f"<think>Easy.</think>Let me check.\n{CALL}", "Easy.\n\nLet me check."),
    ],
)
def test_with_plain_answers_text_is_shown_only_when_a_call_follows(text: str, thought: str) -> None:
    stream = ThoughtStream(plain_answer=True)
    shown = "".join(stream.feed(char) for char in text) + stream.finish()
    assert shown == thought == parse_reply(text, TOOLS, plain_answer=True).thought
