"""What the LLM was asked in a step, as named parts with their hashes: what a trace replay compares.

LLMRequest ─► parts, each a text: model | system prompt | message 1..n (role, content, tool calls)
              | manifest (text mode: the manifest text; native: the tools' JSON Schemas)
              | sampling (temperature, max_tokens, stop sequences, the tool choice)
          ─► {sha256 of them all, parts: {name: sha256}, rendered: {name: text} when asked}
The key and the API base are not parts: they say where the request went, not what it asked.
"""

import hashlib
import json
from typing import Any

from reactstep.contract.step_report import LLMRequestSeen
from reactstep.service.llm.protocol import LLMRequest, Message


def llm_request_seen(request: LLMRequest, manifest: str, rendered: bool) -> LLMRequestSeen:
    """The hashes of what `request` asks (with their texts when `rendered`)."""
    texts = llm_request_parts(request, manifest)
    return LLMRequestSeen(
        sha256=_sha256(json.dumps(texts, sort_keys=True, ensure_ascii=False)),
        parts={name: _sha256(text) for name, text in texts.items()},
        rendered=texts if rendered else None,
    )


def llm_request_parts(request: LLMRequest, manifest: str) -> dict[str, str]:
    """The parts of what the LLM was asked, each as the text a person would diff."""
    messages = request.messages
    parts = {"model": request.model}
    if messages and messages[0].get("role") == "system":
        parts["system prompt"] = str(messages[0].get("content") or "")
        messages = messages[1:]
    for number, message in enumerate(messages, start=1):
        parts[f"message {number}"] = _message_text(message)
    tools = json.dumps(list(request.tools), indent=1, sort_keys=True, ensure_ascii=False)
    parts["manifest"] = tools if request.tools else manifest
    sampling = {"temperature": request.temperature, "max_tokens": request.max_tokens, "stop": request.stop}
    if request.tools:
        sampling["tool_choice"] = request.tool_choice
    parts["sampling"] = json.dumps(sampling, indent=1, sort_keys=True)
    return parts


def _message_text(message: Message) -> str:
    lines = [f"[{message.get('role')}]", str(message.get("content") or "")]
    extra: dict[str, Any] = {key: value for key, value in message.items() if key not in ("role", "content")}
    if extra:
        lines.append(json.dumps(extra, indent=1, sort_keys=True, ensure_ascii=False))
    return "\n".join(lines)


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()
