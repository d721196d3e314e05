"""Keep secrets out of everything the service writes: logs, error bodies, recorded structures.

Secrets are known by the field that holds them, never by what a value looks like:
    server secrets   every SecretStr field of Settings, remembered when an app is built
    request secrets  every SecretStr field of a parsed request body, for the rest of that request
scrub(text)               each known secret in the text becomes [redacted], and so does each piece
                          of it that an escaped form (repr, JSON, a header's bytes) shows
install_log_scrubber()    every log record, from any logger, is scrubbed when it is made
                          (message, arguments and traceback)
redact_fields(value)      the values of secret-named keys (llmKey, api_key, authorization ...) in a
                          JSON-like structure become [redacted], whatever they hold
"""

import contextvars
import logging
import re
import threading
import traceback
from functools import cache, lru_cache
from typing import Any, get_args, get_origin

from pydantic import BaseModel, SecretStr

REDACTED = "[redacted]"
# Field names that hold secrets, matched case-insensitively on the whole name.
SECRET_FIELD = re.compile(
    r".*(api_?key|llmkey|embeddingkey|secret.*|password|authorization|access_token|bearer)",
    re.IGNORECASE,
)

# Shorter values are not scrubbed from text: hiding every "ab" would garble logs, not protect a key.
MIN_SECRET_CHARS = 6
# What repr(), JSON or bytes' repr write otherwise than as the character itself.
_ESCAPED_BY_QUOTING = re.compile(r"[^\x20-\x7e]|[\\'\"]")

_server_secrets: set[str] = set()
_request_secrets: contextvars.ContextVar[frozenset[str]] = contextvars.ContextVar(
    "reactstep_request_secrets", default=frozenset()
)
_install_lock = threading.Lock()
_installed = False


def remember_server_secrets(settings: BaseModel) -> None:
    """Remember every SecretStr the settings hold, for the life of the process."""
    _server_secrets.update(_secret_values(settings))


def remember_request_secrets(body: BaseModel) -> None:
    """Remember the body's SecretStr values for the rest of this request (its context)."""
    found = _secret_values(body)
    if found:
        _request_secrets.set(_request_secrets.get() | found)


def known_secrets() -> list[str]:
    """Every secret to hide now, longest first (so a secret inside another goes with it)."""
    return sorted(_server_secrets | _request_secrets.get(), key=len, reverse=True)


def any_known_secrets() -> bool:
    """Whether there is a secret to hide now (without sorting them, as known_secrets does)."""
    return bool(_server_secrets) or bool(_request_secrets.get())


def scrub(text: str) -> str:
    """The text with every known secret replaced by [redacted]."""
    for secret in known_secrets():
        text = scrub_secret(text, secret)
    return text


def scrub_secret(text: str, secret: str) -> str:
    """The text with this secret, and each piece of it an escaped form would show, redacted."""
    for form in secret_forms(secret):
        if form in text:
            text = text.replace(form, REDACTED)
    return text


@lru_cache(maxsize=256)
def secret_forms(secret: str) -> tuple[str, ...]:
    """The secret and, where quoting would change it (repr, JSON, an HTTP client's error naming a
    header's bytes), each piece between the characters it escapes, when long enough to name it."""
    pieces = [piece for piece in _ESCAPED_BY_QUOTING.split(secret) if len(piece) >= MIN_SECRET_CHARS]
    return tuple(sorted({secret, *pieces}, key=len, reverse=True))


def redact_fields(value: Any) -> Any:
    """A copy of a JSON-like value with the values of secret-named keys replaced."""
    if isinstance(value, dict):
        return {
            key: REDACTED if is_secret_field(str(key)) else redact_fields(item) for key, item in value.items()
        }
    if isinstance(value, list | tuple):
        return [redact_fields(item) for item in value]
    return value


def is_secret_field(name: str) -> bool:
    """Whether a field of this name holds a secret."""
    return SECRET_FIELD.fullmatch(name) is not None


def install_log_scrubber() -> None:
    """Scrub every log record as it is made; installing twice is harmless."""
    global _installed
    with _install_lock:
        if _installed:
            return
        make_record = logging.getLogRecordFactory()

        def scrubbed_record(*args: Any, **kwargs: Any) -> logging.LogRecord:
            record = make_record(*args, **kwargs)
            if any_known_secrets():
                _scrub_record(record)
            return record

        logging.setLogRecordFactory(scrubbed_record)
        _installed = True


def _scrub_record(record: logging.LogRecord) -> None:
    try:
        message = record.getMessage()
    except Exception:  # a malformed format string: let the handler report it as it would
        return
    record.msg, record.args = scrub(message), None
    if record.exc_info and record.exc_info[1] is not None:
        text = "".join(traceback.format_exception(*record.exc_info)).rstrip("\n")
        record.exc_text = scrub(text)
    if record.stack_info:
        record.stack_info = scrub(record.stack_info)


def _secret_values(model: BaseModel) -> frozenset[str]:
    found: set[str] = set()
    for name in _fields_that_may_hold_secrets(type(model)):
        value = getattr(model, name, None)
        if value is not None:
            _collect(value, found)
    return frozenset(found) if found else NONE


NONE: frozenset[str] = frozenset()
_deciding: set[type[BaseModel]] = set()  # models whose fields are being looked at (they may nest)


@cache
def _fields_that_may_hold_secrets(model: type[BaseModel]) -> tuple[str, ...]:
    """The fields whose type mentions SecretStr, or a model with such a field (any depth), found once
    per class: a request's walk skips what can hold no secret (a model config, the tool's args)."""
    _deciding.add(model)
    try:
        fields = model.model_fields.items()
        return tuple(name for name, field in fields if _may_hold_secrets(field.annotation))
    finally:
        _deciding.discard(model)


def _may_hold_secrets(annotation: Any) -> bool:
    if isinstance(annotation, type) and issubclass(annotation, SecretStr):
        return True
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        # A model that nests itself (or one that nests it back) may hold one: walking it is safe.
        return annotation in _deciding or bool(_fields_that_may_hold_secrets(annotation))
    if get_origin(annotation) is dict:
        return False  # _collect does not look inside mappings
    return annotation is Any or any(_may_hold_secrets(argument) for argument in get_args(annotation))


def _collect(value: Any, found: set[str]) -> None:
    if isinstance(value, SecretStr):
        if len(secret := value.get_secret_value()) >= MIN_SECRET_CHARS:
            found.add(secret)
    elif isinstance(value, BaseModel):
        found.update(_secret_values(value))
    elif isinstance(value, list | tuple):
        for item in value:
            _collect(item, found)
