"""The rules openapi.yaml states in words because JSON Schema cannot say them, told to schemathesis.

    file paths     the pattern says every path rule but two: a path is in Unicode NFC, and each
                   part holds at most 255 bytes of UTF-8 (the pattern counts 255 characters)
    client tools   no two share a name (uniqueItems compares whole items, not one field)
    prompt_fit     a pinned fit elides and leaves out no more than conversation_history holds
    Idempotency-Key  a key is sent again only with the request it first came with (422
                   idempotency_key_reused for another: the protocol working, as a 412 is)
    Content-Digest a well-formed digest names the body's own bytes (400 digest_mismatch for
                   another: the protocol working; generated digests rarely match)
A valid-looking request refused (422, or 400 for a digest) for breaking one of these is no finding:
that failure is dropped here, and only that one. Loaded through schemathesis.toml's `hooks`.
"""

import unicodedata
from typing import Any

import schemathesis

MAX_PART_BYTES = 255


def unsayable(path: Any) -> bool:
    """Whether the path breaks one of the two rules no pattern can state."""
    if not isinstance(path, str):
        return False
    try:
        longest = max(len(part.encode()) for part in path.split("/"))
    except UnicodeEncodeError:
        return False  # a lone surrogate: the spec's "valid UTF-8", not one of the two
    return longest > MAX_PART_BYTES or not unicodedata.is_normalized("NFC", path)


def paths_of(case: Any) -> list[Any]:
    """The file paths a request names: a /files/{path} URL's, a sync manifest's."""
    files = case.body.get("files") if isinstance(case.body, dict) else None
    return [(case.path_parameters or {}).get("path"), *(files if isinstance(files, dict) else [])]


def repeats_a_client_tool(case: Any) -> bool:
    """Whether two of the request's client tools share a name."""
    tools = case.body.get("client_tools") if isinstance(case.body, dict) else None
    names = [tool.get("name") for tool in tools if isinstance(tool, dict)] if isinstance(tools, list) else []
    return len(names) != len(set(map(repr, names)))


@schemathesis.hook
def filter_failure(context: Any, failure: Any, case: Any, response: Any) -> bool:
    """Keep every failure but a 422 for a request that breaks an unsayable rule."""
    headers = case.headers or {}
    if response.status_code == 400:
        return not (b'"digest_mismatch"' in response.content and "Content-Digest" in headers)
    if response.status_code != 422:
        return True
    if b'"idempotency_key_reused"' in response.content and "Idempotency-Key" in headers:
        return False
    if b'"invalid_path"' in response.content and any(unsayable(path) for path in paths_of(case)):
        return False
    if b'"field":"prompt_fit"' in response.content and pins_past_the_history(case):
        return False
    return not (b"the name of another client tool" in response.content and repeats_a_client_tool(case))


def pins_past_the_history(case: Any) -> bool:
    """Whether the request's prompt_fit elides or leaves out more than its history holds."""
    body = case.body if isinstance(case.body, dict) else {}
    pin, history = body.get("prompt_fit"), body.get("conversation_history")
    if not isinstance(pin, dict) or not isinstance(history, list):
        return False
    bulky = sum(
        isinstance(item, dict) and ("observation" in item or "raw_output" in item) for item in history
    )
    return pin.get("elided", 0) > bulky or pin.get("left_out", 0) > len(history)
