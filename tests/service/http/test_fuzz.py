"""schemathesis against openapi.yaml: generated requests, valid and invalid, get no 5xx and answers
that match the contract (status, content type, headers, body schema, auth enforced).

The app is the real one, in-process over ASGI, with a scripted gateway, a local store and a small
hashing embedder; every request-named provider and api_base is refused, so nothing leaves the process
(network_log checks it). Runs are derandomized and bounded: MAX_EXAMPLES per operation and mode.
"""

import math
import tempfile
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.generation import GenerationMode
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    ignored_auth,
    negative_data_rejection,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from reactstep.client.scripted_llm import word_vector
from reactstep.contract.step import Usage
from reactstep.service.http.app import create_app
from reactstep.service.http.auth import key_entry
from reactstep.service.llm.protocol import LLMReply, LLMRequest
from reactstep.service.settings import Settings
from reactstep.tools.store.local import LocalStore
from tests.service.http.test_openapi import errors_of, lookup, response_pointer, sse_events

MAX_EXAMPLES = 25
SERVICE_KEY = "rsk_fuzz-key-0123456789abcdef"
AUTH = {"Authorization": f"Bearer {SERVICE_KEY}"}


@schemathesis.check
def body_conformance(ctx: Any, response: Any, case: Any) -> bool | None:
    """JSON bodies against the response schema; an event stream event by event against x-sse-events
    (before OpenAPI 3.2 nothing says how `schema` maps onto a stream; ours documents each event's data)."""
    content_type = (response.headers.get("content-type") or [""])[0]
    if not content_type.startswith("text/event-stream"):
        return response_schema_conformance(ctx, response, case)
    pointer = response_pointer(case.path, case.method, response.status_code)
    documented = lookup(f"{pointer}/content/text~1event-stream")["x-sse-events"]
    events = sse_events(response.content.decode())
    for name, data in events:
        assert errors_of(documented[name].removeprefix("#"), data) == [], name
    assert [name for name, _ in events][-1:] in (["result"], ["error"])
    return None


@schemathesis.check
def invalid_data_rejected(ctx: Any, response: Any, case: Any) -> bool | None:
    """schemathesis' negative_data_rejection, where 413 also counts: an invalid body that is also
    larger than the body limit is refused by size before its shape is looked at."""
    if response.status_code == 413:
        return None
    return negative_data_rejection(ctx, response, case)


CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    body_conformance,
    invalid_data_rejected,
    ignored_auth,
]


class AnsweringGateway:
    """Answers every step at once, so generated requests reach every later stage."""

    async def complete(self, request: LLMRequest) -> LLMReply:
        return LLMReply(
            text="Thought: done\nFinal Answer: ok", usage=Usage(), finish_reason="stop", elapsed_ms=1
        )

    async def stream(self, request: LLMRequest) -> AsyncIterator[str | LLMReply]:
        reply = await self.complete(request)
        yield reply.text
        yield reply


class HashingEmbedder:
    """Bag-of-words vectors: fast, deterministic and searchable."""

    model_name = "local/fuzz-hash"
    dimension = len(word_vector(""))
    known_dimension = dimension

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return [self.embed_query(text) for text in texts]

    def embed_query(self, text: str) -> list[float]:
        vector = word_vector(text)
        norm = math.sqrt(sum(value * value for value in vector)) or 1.0
        return [value / norm for value in vector]


def build_app(root: Path) -> Any:
    """The real app with fakes at its seams, keyed, with every outbound destination refused."""
    store = LocalStore(root / "objects")
    store.put("demo", "src/app.py", b"def main():\n    return 42\n")
    fields: dict[str, Any] = {
        "data_dir": root,
        "api_keys": [key_entry(SERVICE_KEY, "*")],
        "llm_allowed_providers": [],  # every model a request names is refused: no call leaves
        "llm_api_base_allowlist": [],
        "embedding_model": HashingEmbedder.model_name,
        "llm_max_retries": 0,
    }
    return create_app(Settings(**fields), llm=AnsweringGateway(), store=store, embedder=HashingEmbedder())


# schemathesis binds the app when the schema loads, at collection; the directory goes at exit.
_DATA = tempfile.TemporaryDirectory(prefix="reactstep-fuzz-")
schema = schemathesis.openapi.from_asgi("/openapi.yaml", build_app(Path(_DATA.name)))
schema.config.generation.update(
    modes=[GenerationMode.POSITIVE, GenerationMode.NEGATIVE], max_examples=MAX_EXAMPLES
)


@schema.parametrize()
@settings(deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck))
def test_generated_requests_meet_the_contract(
    case: Any, network_log: list[tuple[str, tuple[Any, ...]]]
) -> None:
    case.call_and_validate(headers=AUTH, checks=CHECKS)
    assert [args for event, args in network_log if event == "socket.connect"] == []
