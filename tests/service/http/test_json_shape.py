"""json_shape counts a body's structure from its bytes, strings left out, however it is cut into slices."""

import json

import pytest

from reactstep.service.http.bodies import measure, nesting

CASES = [
    # (JSON text, arrays and objects, commas and colons, deepest nesting)
    ('{"a": "x,y{[", "b": [1, 2, {"c": "\\\\\\"{"}]}', 3, 6, 3),
    ('["' + "a" * 50 + '", {"k": [[[]]]}]', 5, 2, 5),
    ('"[{,:}]"', 0, 0, 0),
    ('{"\\"": "\\\\", "k": ["\\u005b"]}', 2, 3, 2),
    ("[]", 1, 0, 1),
    ('{"a": "unterminated', 1, 1, 1),  # not JSON: counted as far as it goes, the parser says where it breaks
]


@pytest.mark.parametrize("slice_bytes", [1, 3, 7, 1 << 20])
@pytest.mark.parametrize(("text", "containers", "items", "deepest"), CASES)
def test_structure_is_counted_outside_strings_whatever_the_slices(
    text: str, containers: int, items: int, deepest: int, slice_bytes: int
) -> None:
    shape = measure(text.encode(), slice_bytes)
    assert (shape.containers, shape.items, nesting(shape.brackets)) == (containers, items, deepest)


def test_a_string_longer_than_a_slice_is_left_out_whole() -> None:
    text = json.dumps({"code": "def f(a, b): return [a, {b: 1}]\n" * 1000, "n": [1, 2]})
    assert measure(text.encode(), 64) == measure(text.encode())
    assert (measure(text.encode(), 64).containers, measure(text.encode(), 64).items) == (2, 4)
