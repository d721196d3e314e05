"""code_search: find the code that matches a description, by meaning and by identifiers."""

import re

from pydantic import BaseModel, ConfigDict, Field

from reactstep.tools.errors import ToolError
from reactstep.tools.index.conventions import is_test_path
from reactstep.tools.index.symbols import stale_note
from reactstep.tools.matching.globs import as_list, compile_globs
from reactstep.tools.ranking.retrieval import Passage
from reactstep.tools.registry import ToolContext, ToolSpec
from reactstep.tools.store.paths import ProjectPath, normalize_path
from reactstep.tools.vector_store.store import SearchFilter

MAX_RESULTS = 100
SNIPPET_MAX_LINES = 40
# A query about tests keeps them where they rank; any other ranks them after the rest of the code.
ABOUT_TESTS = re.compile(
    r"\b(?:tests?|testing|tested|pytest|unittest|fixtures?|mocks?|specs?|asserts?)\b", re.I
)
SNIPPET_MIN_LINES = 3
# The snippet lengths tried, longest first, until every hit fits the observation's budget.
SNIPPET_LINE_STEPS = (SNIPPET_MAX_LINES, 20, 10, 6, SNIPPET_MIN_LINES)


class CodeSearchArgs(BaseModel):
    """Arguments of code_search."""

    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=1, max_length=1_000, description="What the code does or is called.")
    max_results: int | None = Field(None, ge=1, le=MAX_RESULTS, description="How many results to show.")
    path: str | None = Field(None, description="Only search below this folder or file, e.g. 'src/api'.")
    language: str | None = Field(None, max_length=32, description="Only this language, e.g. 'python'.")
    glob: str | list[str] | None = Field(
        None,
        description="Only files matching these globs, e.g. '*.py' or ['src/**', '!**/migrations/**'] "
        "(they choose among the best candidates; use path to search one folder exhaustively).",
    )
    include_tests: bool | None = Field(
        None,
        description="true: tests rank like any code; false: no tests; unset: tests rank below other code "
        "unless the query is about tests.",
    )


def code_search(args: CodeSearchArgs, context: ToolContext) -> str:
    """Numbered hits with path:start-end, symbol, score and the numbered snippet, within a budget."""
    if context.index is None:
        raise ToolError("code_search is not available on this server (no search index configured)")
    prefix = normalize_path(args.path) if args.path else None
    where = SearchFilter(context.project_id, path_prefix=prefix or None, language=args.language)
    limit = args.max_results or context.limits.code_search_max_results
    globs = compile_globs(patterns) if (patterns := as_list(args.glob)) else None
    tests_last = args.include_tests is None and not ABOUT_TESTS.search(args.query)
    fresh = FreshFiles(context)

    def wanted(passage: Passage) -> bool:
        if globs is not None and not globs.matches(passage.path):
            return False
        if args.include_tests is False and is_test_path(passage.path):
            return False
        return fresh(passage)

    # Room to bring other code up from below the page when tests are ranked after it.
    asked = min(limit * 2, MAX_RESULTS) if tests_last else limit
    passages, found = context.index.search(where, args.query, asked, current=wanted)
    if tests_last:
        passages = sorted(passages, key=lambda passage: is_test_path(passage.path))[:limit]  # stable
    note = stale_note(len(fresh.stale), context.project_id)
    if not passages:
        return f'No code found for "{args.query}".' + note
    return render_results(args.query, passages, found, context.limits.code_search_max_chars) + note


class FreshFiles:
    """Whether a passage's file is still the version that was indexed (one HEAD per file)."""

    def __init__(self, context: ToolContext) -> None:
        self._context = context
        self._etags: dict[str, str | None] = {}
        self.stale: set[str] = set()

    def __call__(self, passage: Passage) -> bool:
        if passage.path not in self._etags:
            # an indexed path: a listing of the store gave it
            info = self._context.store.head(self._context.project_id, ProjectPath(passage.path))
            self._etags[passage.path] = info.etag if info is not None else None
        if self._etags[passage.path] == passage.etag:
            return True
        self.stale.add(passage.path)
        return False


def render_results(query: str, passages: list[Passage], found: int, budget: int) -> str:
    """The observation text within `budget` characters: every hit asked for, with shorter snippets
    when they would not fit (down to SNIPPET_MIN_LINES each); only then are the last hits left out.

    `found` is how many passages match (retrieval.RELEVANCE_FLOOR); the page still shows the best
    ones asked for, and says how many of them are below the floor:
    Found 1 result for "add" above the relevance floor, and 6 weaker ones below it (showing 7):"""
    # Room for the passages: the budget less the longest header and closing line this page can have.
    room = budget - len(_header(query, found, len(passages), SNIPPET_MAX_LINES)) - len(_more(found))
    for snippet_lines in SNIPPET_LINE_STEPS:
        blocks = [
            _render_passage(number, passage, snippet_lines) for number, passage in enumerate(passages, 1)
        ]
        if sum(len(block) + 2 for block in blocks) <= room:
            break
    shown: list[str] = []
    used = 0
    for block in blocks:
        if shown and used + len(block) + 2 > room:
            break
        shown.append(block)
        used += len(block) + 2
    cut = any(len(passage.lines) > snippet_lines for passage in passages[: len(shown)])
    text = "\n\n".join([_header(query, found, len(shown), snippet_lines if cut else None), *shown])
    if found > len(shown):
        text += _more(found - len(shown))
    return text


def _header(query: str, found: int, shown: int, cut_to: int | None) -> str:
    header = f'Found {_results(found)} for "{query}"'
    if found < shown:
        below = shown - found
        header += f" above the relevance floor, and {below} weaker {'one' if below == 1 else 'ones'} below it"
    header += f" (showing {shown}"
    if cut_to is not None:
        header += f"; snippets cut to {cut_to} lines to fit"
    return header + "):"


def _more(count: int) -> str:
    return f"\n\n...and {count} more"


def _results(count: int) -> str:
    return f"{count} result" if count == 1 else f"{count} results"


def _render_passage(number: int, passage: Passage, snippet_lines: int = SNIPPET_MAX_LINES) -> str:
    title = f"{number}. {passage.path}:{passage.start_line}-{passage.end_line}"
    if passage.symbol:
        title += f" {passage.symbol}"
    title += f" (score {passage.score:.3f})"
    shown = passage.lines[:snippet_lines]
    body = [f"{passage.start_line + offset:>5} | {text}" for offset, text in enumerate(shown)]
    if len(passage.lines) > len(shown):
        body.append(f"      ... {len(passage.lines) - len(shown)} more lines (read_file to see them)")
    return "\n".join([title, *body])


SPEC = ToolSpec(
    name="code_search",
    description=(
        "Searches the project's code for snippets relevant to a description or identifier; returns "
        "file paths, line ranges, symbols and the code. Use it to find where something is implemented."
    ),
    category="search",
    args_model=CodeSearchArgs,
    run=code_search,
    example='code_search(query="user authentication functions")',
    aliases={
        "q": "query",
        "search": "query",
        "search_query": "query",
        "text": "query",
        "directory": "path",
        "folder": "path",
        "include": "glob",
        "file_pattern": "glob",
    },
    uses_index=True,
)
