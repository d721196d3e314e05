"""code_search: find the code that matches a description, by meaning and by identifiers."""

from pydantic import BaseModel, ConfigDict, Field

from reactstep.tools.errors import ToolError
from reactstep.tools.index.symbols import stale_note
from reactstep.tools.registry import ToolContext, ToolSpec
from reactstep.tools.store.paths import normalize_path
from reactstep.tools.vectors.retrieval import Passage
from reactstep.tools.vectors.store import SearchFilter

SNIPPET_MAX_LINES = 40


class CodeSearchArgs(BaseModel):
    """Arguments of code_search."""

    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=1, max_length=1_000, description="What the code does or is called.")
    max_results: int | None = Field(None, ge=1, le=50, description="How many results to show.")
    path: str | None = Field(None, description="Only search below this folder or file, e.g. 'src/api'.")
    language: str | None = Field(None, max_length=32, description="Only this language, e.g. 'python'.")


def code_search(args: CodeSearchArgs, context: ToolContext) -> str:
    """Numbered hits with path:start-end, symbol, score and the numbered snippet, within a budget."""
    if context.index is None:
        raise ToolError("code_search is not available on this server (no search index configured)")
    prefix = normalize_path(args.path) if args.path else None
    where = SearchFilter(context.project_id, path_prefix=prefix or None, language=args.language)
    limit = args.max_results or context.limits.code_search_max_results
    fresh = FreshFiles(context)
    passages, found = context.index.search(where, args.query, limit, current=fresh)
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
            info = self._context.store.head(self._context.project_id, passage.path)
            self._etags[passage.path] = info.etag if info is not None else None
        if self._etags[passage.path] == passage.etag:
            return True
        self.stale.add(passage.path)
        return False


def render_results(query: str, passages: list[Passage], found: int, budget: int) -> str:
    """The observation text, cut to `budget` characters at a whole hit."""
    blocks: list[str] = []
    used = len(query) + 40
    for number, passage in enumerate(passages, start=1):
        block = _render_passage(number, passage)
        if blocks and used + len(block) > budget:
            break
        blocks.append(block)
        used += len(block)
    header = f'Found {found} results for "{query}" (showing {len(blocks)}):'
    text = "\n\n".join([header, *blocks])
    if found > len(blocks):
        text += f"\n\n...and {found - len(blocks)} more"
    return text


def _render_passage(number: int, passage: Passage) -> str:
    title = f"{number}. {passage.path}:{passage.start_line}-{passage.end_line}"
    if passage.symbol:
        title += f" {passage.symbol}"
    title += f" (score {passage.score:.3f})"
    shown = passage.lines[:SNIPPET_MAX_LINES]
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
    },
    uses_index=True,
)
