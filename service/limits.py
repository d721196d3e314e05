"""Bounds on what a request or a model reply may make the server hold, each refused with its own code.

body bytes          http.admission                  413 payload_too_large (declared or chunked)
JSON nesting        http.json_shape                 400 json_too_deep (counted in the bytes, before parsing)
JSON values         http.json_shape                 413 payload_too_large (arrays and objects, items)
field lengths       schemas.py / openapi.yaml       422 validation_failed naming the field
list and map sizes  contract (maxItems, maxProperties)  422 validation_failed naming the field, its size
                                                    and the bound (history_too_long for the history)
llm max_tokens      check_max_tokens                422 max_tokens_too_large
model reply size    step.call.cap_reply             cut to MAX_REPLY_CHARS, noted
requests at work    http.admission                  503 overloaded
"""

from reactstep.service.errors import ValidationFailed

MAX_JSON_DEPTH = 32  # deeper than any body the API defines; stops a recursion bomb before pydantic
# What a parser may be asked to build from one body. A body at the size limit holds at most a few
# thousand arrays and objects in real use (200 history items, 50 client tools with their schemas) and
# a few hundred thousand items (a sync manifest of 100,000 paths, its bound, is 200,000); parsing
# either bound takes tens of milliseconds, where 16 MB of tiny objects took seconds.
MAX_CONTAINERS = 20_000
MAX_ITEMS = 250_000
MAX_REPLY_CHARS = 100_000  # a reply kept in history must fit what a request may send back


def check_max_tokens(requested: int | None, cap: int) -> None:
    """Refuse an llm_config.max_tokens above the server's cap."""
    if requested is not None and requested > cap:
        raise ValidationFailed(
            f"llm_config.max_tokens is {requested}; the limit is {cap} (REACTSTEP_LLM_MAX_TOKENS_CAP)",
            code="max_tokens_too_large",
        )
