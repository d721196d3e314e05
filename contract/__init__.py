"""The HTTP contract: the pydantic models of every request and response body, SSE event and error body,
and the root of the error tree (errors.py) whose codes those bodies carry.

Pydantic and the standard library only; openapi.yaml's `components: schemas:` is generated from these
models (scripts/openapi.py), so client and server read one source.
"""
