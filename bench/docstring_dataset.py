"""The docstring -> function retrieval set: a package's sources with every docstring blanked out.

For each function or method with a docstring, the query is the docstring's first sentence and the
answer is the file plus the `def` line. The indexed copy keeps every line number: docstring lines
become blank (or `pass` where the body would be empty), so the answer is not in the indexed text.
The same function asked by its name as code (`Map.bind_to_environ`, a plain `redirect`) is its
identifier query, kept when no other function of the package has that qualified name.

The releases are pinned (RELEASES): a new release would change the queries and the table in README.
"""

import ast
import re
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path

MIN_QUERY_WORDS = 4
# The released sources the benchmark reads, pinned so a rerun asks the same queries of the same code.
# sqlalchemy and grpcio came last (2026-11-26): neither was seen by the code model's training nor by
# the choice of any weight: both are held out.
RELEASES = {
    "attrs": "26.1.0", "httpx": "0.28.1", "jinja2": "3.1.6", "werkzeug": "3.1.9", "pytest": "9.2.0",
    "sqlalchemy": "2.1.9", "grpcio": "1.85.3",
}  # fmt: skip
# A distribution's import folder where it differs from its name (pytest's code lives in _pytest).
SOURCE_FOLDERS = {"attrs": "attr", "pytest": "_pytest", "grpcio": "grpc"}
# Code-like words a natural-language question leaves out: `quoted`, dotted, snake_case, camelCase, calls.
CODE_WORD = re.compile(r"`[^`]*`|\S*(?:[._(]\S|[a-z][A-Z])\S*|:\S+:")


@dataclass(frozen=True)
class Query:
    """One docstring query and where its function is defined."""

    text: str
    path: str
    def_line: int
    name: str
    question: str = ""  # the same sentence as a question with no code words (see `as_question`)
    identifier: str = ""  # the qualified name (`Class.method`), "" when another function shares it
    # Other functions asked by the very same text (`--shared-answers`): each is as right an answer.
    also: tuple[tuple[str, int], ...] = ()

    def answered_by(self, path: str, start_line: int, end_line: int) -> bool:
        """Whether lines start_line..end_line of `path` hold a right answer's `def` line."""
        answers = ((self.path, self.def_line), *self.also)
        return any(path == where and start_line <= line <= end_line for where, line in answers)


def fetch_package(name: str, into: Path) -> Path:
    """pip-install the pinned release (no dependencies) into `into` and return its source folder."""
    release = f"{name}=={RELEASES[name]}" if name in RELEASES else name
    target = into / f"{name}-site"
    if not target.exists():
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "install",
                "--quiet",
                "--no-deps",
                "--target",
                str(target),
                release,
            ],
            check=True,
        )
    installed = sorted(path.name for path in target.glob("*.dist-info"))
    if name in RELEASES and not any(path.endswith(f"-{RELEASES[name]}.dist-info") for path in installed):
        raise SystemExit(
            f"{target} holds {installed}, not {release}: delete it to install the pinned release"
        )
    return target / SOURCE_FOLDERS.get(name, name)


def build(source: Path, out: Path) -> list[Query]:
    """Copy `source` to `out` without docstrings and return the queries, sorted by path and line."""
    queries: list[Query] = []
    defined: Counter[str] = Counter()  # qualified names of every function, documented or not
    for file in sorted(source.rglob("*.py")):
        relative = file.relative_to(source).as_posix()
        text = file.read_text()
        tree = ast.parse(text)
        queries.extend(_queries(tree, relative, defined))
        target = out / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(_strip_docstrings(text, tree))
    return [replace(query, identifier="") if defined[query.identifier] > 1 else query for query in queries]


def _queries(
    tree: ast.AST, path: str, defined: Counter[str], prefix: str = "", nested: bool = False
) -> list[Query]:
    """The documented functions below `tree`, counting every function's qualified name in `defined`;
    a function nested in another gets no identifier query (it is nobody's API)."""
    found = []
    for node in ast.iter_child_nodes(tree):
        name = getattr(node, "name", "")
        qualified = f"{prefix}{name}"
        is_function = isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        if is_function:
            defined[qualified] += 1
            sentence = first_sentence(ast.get_docstring(node) or "")
            if len(sentence.split()) >= MIN_QUERY_WORDS:
                identifier = "" if nested else qualified
                found.append(Query(sentence, path, node.lineno, node.name, as_question(sentence), identifier))
        inner = f"{qualified}." if name else prefix
        found.extend(_queries(node, path, defined, inner, nested or is_function))
    return found


def first_sentence(docstring: str) -> str:
    """The docstring's first sentence, on one line."""
    paragraph = docstring.strip().split("\n\n")[0]
    flat = " ".join(paragraph.split())
    match = re.match(r"(.+?[.!?])(\s|$)", flat)
    return match.group(1) if match else flat


def as_question(sentence: str) -> str:
    """A docstring sentence as a user would ask it: no code words, "how do I ..." / "what ...".

    Mechanical and fixed: every code-like word (CODE_WORD) is dropped, the first word is
    lowercased and a third-person verb loses its "s" ("Returns the ..." -> "how do I return the ...").
    Snake_case, camelCase, dotted and `quoted` names go; a plain word in RST ``double quotes``
    can stay (the first backquote pair matches empty), in 158 of the 1,716 benchmark questions.
    """
    words = CODE_WORD.sub(" ", sentence).rstrip(".!?").split()
    if not words:
        return ""
    first = words[0].lower()
    if first.endswith("es") and first[:-2].endswith(("ss", "sh", "ch", "x")):
        first = first[:-2]
    elif first.endswith("s") and not first.endswith("ss") and len(first) > 3:
        first = first[:-1]
    return " ".join(["how", "do", "I", first, *words[1:]])


def _strip_docstrings(text: str, tree: ast.Module) -> str:
    lines = text.splitlines()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        body = node.body
        first = body[0] if body else None
        if isinstance(first, ast.Expr) and isinstance(getattr(first.value, "value", None), str):
            _blank(lines, first, needs_body=len(body) == 1 and not isinstance(node, ast.Module))
    return "\n".join(lines) + "\n"


def _blank(lines: list[str], statement: ast.stmt, needs_body: bool) -> None:
    first, last = statement.lineno, statement.end_lineno or statement.lineno
    indent = lines[first - 1][: len(lines[first - 1]) - len(lines[first - 1].lstrip())]
    for number in range(first, last + 1):
        lines[number - 1] = ""
    if needs_body:
        lines[first - 1] = f"{indent}pass"
