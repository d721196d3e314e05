"""The HTTP contract: the pydantic models of every request and response body, SSE event and error body.

Pydantic and the standard library only; openapi.yaml's `components: schemas:` is generated from these
models (scripts/openapi.py), so client and server read one source.
"""
