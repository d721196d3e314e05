"""The one error tree: every class carries a code and an HTTP status, each code one status, each name
one class, every class drawn in its module's docstring, and every code in docs/http-api.md's table."""

import re
from pathlib import Path
from types import ModuleType

import pytest

import reactstep.service.http.app  # noqa: F401  (loads every module that raises, so every leaf is known)
from reactstep.contract import errors as contract_errors
from reactstep.contract.errors import ServiceError
from reactstep.service import errors as service_errors
from reactstep.tools import errors as tools_errors

ROOT = Path(__file__).resolve().parents[2]
ERROR_MODULES = (contract_errors, service_errors, tools_errors)


def error_tree() -> list[type[ServiceError]]:
    found: list[type[ServiceError]] = []
    pending: list[type[ServiceError]] = [ServiceError]
    while pending:
        kind = pending.pop()
        if kind not in found and kind.__module__.startswith("reactstep."):  # not a test's own subclass
            found.append(kind)
            pending.extend(kind.__subclasses__())
    return found


def docs_table() -> dict[str, int]:
    """Each code in docs/http-api.md's errors table, with the status of its row."""
    page = (ROOT / "docs" / "http-api.md").read_text()
    table = page.split("<!-- errors table:")[1].split("<!-- end of the errors table -->")[0]
    listed: dict[str, int] = {}
    for status, codes in re.findall(r"^\| (\d{3}) \|[^|]*\| (.*) \|$", table, re.M):
        listed.update({code: int(status) for code in re.findall(r"`(\w+)`", codes)})
    return listed


@pytest.mark.parametrize("kind", error_tree(), ids=lambda kind: kind.__name__)
def test_each_class_carries_a_code_and_a_status(kind: type[ServiceError]) -> None:
    assert all(re.fullmatch(r"[a-z][a-z_]*", code) for code in kind.carried_codes()), kind.carried_codes()
    assert 400 <= kind.status <= 599
    # a class that changes its status names the code that goes with it
    assert "code" in vars(kind) or "status" not in vars(kind), kind


def test_each_code_has_one_status_and_each_name_one_class() -> None:
    statuses: dict[str, set[int]] = {}
    for kind in error_tree():
        for code in kind.carried_codes():
            statuses.setdefault(code, set()).add(kind.status)
    assert {code: found for code, found in statuses.items() if len(found) > 1} == {}
    names = [kind.__name__ for kind in error_tree()]
    assert sorted(name for name in set(names) if names.count(name) > 1) == []


def test_the_docs_table_lists_every_code_under_its_status() -> None:
    assert docs_table() == {code: kind.status for kind in error_tree() for code in kind.carried_codes()}


@pytest.mark.parametrize("module", ERROR_MODULES, ids=lambda module: module.__name__)
def test_each_errors_module_draws_its_classes(module: ModuleType) -> None:
    drawn = module.__doc__ or ""
    defined = [kind.__name__ for kind in error_tree() if kind.__module__ == module.__name__]
    assert defined
    assert [name for name in defined if not re.search(rf"\b{name}\b", drawn)] == []


@pytest.mark.parametrize("kind", error_tree(), ids=lambda kind: kind.__name__)
def test_a_class_carries_only_the_codes_it_declares(kind: type[ServiceError]) -> None:
    for code in sorted(kind.carried_codes() - {kind.code}):
        assert kind.__new__(kind).code == kind.code  # the class's own code, unless one is named
        assert ServiceError.__init__(error := kind.__new__(kind), "m", code=code) is None
        assert (error.code, error.status) == (code, kind.status)
    with pytest.raises(ValueError, match="does not carry the code"):
        ServiceError.__init__(kind.__new__(kind), "m", code="no_such_code")
