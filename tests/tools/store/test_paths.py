"""The path rules every route and tool shares: text, NFC, and what counts as twins."""

import unicodedata

import pytest

from reactstep.contract.common import escaped_bytes
from reactstep.tools.errors import UnsafePath
from reactstep.tools.store.paths import fold_key, normalize_path, twin_in, twins

NFC = "docs/café.md"
NFD = unicodedata.normalize("NFD", NFC)


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("\udcff\udcfe.py", r"path b'\xff\xfe.py' is not valid UTF-8 text; name files in UTF-8"),
        ("\udcfe\udcff.py", r"path b'\xfe\xff.py' is not valid UTF-8 text; name files in UTF-8"),
        ("src/\ud800.py", r"path b'src/\xed\xa0\x80.py' is not valid UTF-8 text; name files in UTF-8"),
        (NFD, r"path 'docs/cafe\u0301.md' is not in Unicode NFC form; send the NFC form 'docs/café.md'"),
        ("\u212b.txt", "path '\\u212b.txt' is not in Unicode NFC form; send the NFC form '\xc5.txt'"),
        ("a\x00b", "path contains a NUL character"),
        ("a\x1fb", "path contains a control character"),
        ("a\x7fb", "path contains a control character"),
        ("a%00b", "path contains a NUL character"),
        ("a\\b", "path contains a backslash; use '/' between parts"),
        ("/etc/passwd", "path '/etc/passwd' is absolute; give a path relative to the project root"),
        ("~/x", "path '~/x' is absolute; give a path relative to the project root"),
        ("C:x", "path 'C:x' is absolute; give a path relative to the project root"),
        ("a/../b", "path 'a/../b' must be relative to the project root, without '..'"),
        ("a/%2e%2e/b", "path 'a/%2e%2e/b' must be relative to the project root, without '..'"),
        ("x" * 1025, "path is longer than 1024 characters"),
    ],
)
def test_refused_paths_say_why(path: str, message: str) -> None:
    with pytest.raises(UnsafePath) as refused:
        normalize_path(path)
    assert str(refused.value) == message


@pytest.mark.parametrize(
    ("path", "clean"),
    [
        (NFC, NFC),
        ("日本.py", "日本.py"),
        ("emoji/🙂 notes.txt", "emoji/🙂 notes.txt"),
        ("./a//b/", "a/b"),
        ("100%.md", "100%.md"),
        ("\u0085next.md", "\u0085next.md"),  # a C1 control is not refused: only C0 and DEL are
        (" a.py", " a.py"),  # whitespace is part of a name: never trimmed into another file's
        ("notes.txt ", "notes.txt "),
    ],
)
def test_valid_text_is_kept_as_it_is(path: str, clean: str) -> None:
    assert normalize_path(path) == clean


def test_escaped_bytes_names_what_a_non_utf8_name_holds() -> None:
    assert escaped_bytes("\udcff\udcfe.py") == r"b'\xff\xfe.py'"
    assert escaped_bytes("\ud800") == r"b'\xed\xa0\x80'"
    assert escaped_bytes("café") == r"b'caf\xc3\xa9'"


@pytest.mark.parametrize(
    ("one", "other", "twinned"),
    [
        ("README.md", "readme.md", True),
        ("src/App.py", "SRC/app.py", True),
        (NFC, NFD, True),
        (NFC, "DOCS/CAFÉ.md", True),
        ("straße.py", "strasse.py", True),
        ("a.py", "b.py", False),
        ("café.md", "cafe.md", False),
    ],
)
def test_twins_are_one_name_to_a_case_and_normalisation_insensitive_disk(
    one: str, other: str, twinned: bool
) -> None:
    assert (fold_key(one) == fold_key(other)) is twinned
    assert twins([one, "unrelated.txt", other]) == ((one, other) if twinned else None)
    assert twin_in(other, [one, "unrelated.txt"]) == (one if twinned else None)


def test_a_path_is_not_its_own_twin() -> None:
    assert twin_in("README.md", ["README.md"]) is None
    assert twins(["README.md", "README.md"]) is None
