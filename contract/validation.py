"""How a value that fails its pydantic model is described to the model that sent it: the wording the
server's tools and the client's shell tools share, so a model reads one language from both sides."""

from pydantic import ValidationError


def describe_validation_error(exc: ValidationError) -> str:
    """A short, value-free sentence per failed field: `argument 'timeout': Input should be ...`."""
    parts = []
    for error in exc.errors(include_input=False, include_url=False):
        where = ".".join(str(part) for part in error["loc"]) or "arguments"
        parts.append(f"argument {where!r}: {error['msg']}")
    return "; ".join(parts)
