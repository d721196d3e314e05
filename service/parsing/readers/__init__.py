"""The format readers, tried in this fixed order; each finds the steps its format writes.

    1 react_text  "Action: tool(args)", "Action: name" + "Action Input: ...", "Final Answer: ..."
    2 harmony     GPT-OSS channels: commentary to=functions.name, final
    3 token_calls calls framed by special tokens: DeepSeek, Kimi K2, GLM's <arg_key>/<arg_value>
    4 call_blocks JSON calls after a model's marker: <tool_call>, [TOOL_CALLS], <|python_tag|>,
                  <|tool_call|>, functools, <tool_calls>, InternLM, Command R7B, xLAM arrays
    5 pythonic    [name(arg=..), ...] (Llama 3.2, Llama 4)
    6 xml_tags    <tool>name</tool><tool_input>..</tool_input>, <final_answer>..</final_answer>,
                  <function=name><parameter=k>..</parameter></function>, <invoke name=..>
                  (Qwen3-Coder, Seed-OSS, MiniMax-M2 inside their wrappers)
    7 json_blob   {"action": .., "action_input": ..} and the other key pairs (bare, fenced, in tags)
    8 shell_block one ```bash block (or a closing ``` block, or <command>) as the whole action,
                  for a shell tool (mini-swe-agent, SWE-agent)

The format is found from the reply's own markers, never from the model's name. Reasoning blocks
(<think> and the like) are taken out before the readers run (reasoning.py).

A reader skips text inside the steps an earlier reader found, so a JSON object written as a
tool's argument, or quoted inside a final answer, is content and never a second action.
CALL_STARTS: where an open model's call begins anywhere in a line, each reader's own STARTS (a
streamed thought ends there, step/stream.py).
"""

from collections.abc import Callable, Mapping
from typing import Any

from reactstep.service.parsing.readers import (
    call_blocks,
    harmony,
    json_blob,
    pythonic,
    react_text,
    shell_block,
    token_calls,
    xml_tags,
)
from reactstep.service.parsing.readers.reading import Reading
from reactstep.service.parsing.steps import Step

Reader = Callable[[str, list[Step], Mapping[str, Any]], Reading]

READERS: tuple[tuple[str, Reader], ...] = (
    ("react_text", react_text.read),
    ("harmony", harmony.read),
    ("token_calls", token_calls.read),
    ("call_blocks", call_blocks.read),
    ("pythonic", pythonic.read),
    ("xml_tags", xml_tags.read),
    ("json_blob", json_blob.read),
    ("shell_block", shell_block.read),
)

CALL_STARTS: tuple[str, ...] = (
    *call_blocks.STARTS,
    *pythonic.STARTS,
    *token_calls.STARTS,
    *harmony.STARTS,
    *xml_tags.STARTS,
)

__all__ = ["CALL_STARTS", "READERS", "Reader", "Reading"]
