"""The format readers, tried in this fixed order; each finds the steps its format writes.

    1 react_text  "Action: tool(args)", "Action: name" + "Action Input: ...", "Final Answer: ..."
    2 xml_tags    <tool>name</tool><tool_input>..</tool_input>, <final_answer>..</final_answer>,
                  <function=name><parameter=k>..</parameter></function>, <invoke name=..>
    3 json_blob   {"action": .., "action_input": ..} and the other key pairs (bare, fenced, in tags)
    4 shell_block one ```bash block (or a closing ``` block, or <command>) as the whole action,
                  for a shell tool (mini-swe-agent, SWE-agent)

A reader skips text inside the steps an earlier reader found, so a JSON object written as a
tool's argument, or quoted inside a final answer, is content and never a second action.
"""

from collections.abc import Callable, Mapping
from typing import Any

from reactstep.service.parsing.readers import json_blob, react_text, shell_block, xml_tags
from reactstep.service.parsing.readers.reading import Reading
from reactstep.service.parsing.steps import Step

Reader = Callable[[str, list[Step], Mapping[str, Any]], Reading]

READERS: tuple[tuple[str, Reader], ...] = (
    ("react_text", react_text.read),
    ("xml_tags", xml_tags.read),
    ("json_blob", json_blob.read),
    ("shell_block", shell_block.read),
)

__all__ = ["READERS", "Reader", "Reading"]
