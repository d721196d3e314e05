"""Source files split into retrieval chunks along their syntax, with the symbols and imports of one parse.

    path --detect_language--> language
    syntax language:  text --parse--> tree --read_definitions--> Definition tree --_Chunker--> chunks
                                           --read_imports-----> imports
    other text, or a parse that failed:  text --line windows--> "window" chunks

A function or method is one chunk (overlapping windows when longer than max_lines). A class, like a
namespace (Rust `mod`, TS `namespace`), is one chunk holding its members, or when longer than max_lines its
header and the gaps between its members; its members get chunks of their own either way. Code between
definitions becomes "module" chunks, so every non-blank line is in at least one chunk. Chunks are sorted by
(start_line, end_line).
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass

from reactstep.tools.source.definitions import Definition, Definitions, read_definitions
from reactstep.tools.source.imports import read_imports
from reactstep.tools.source.languages import detect_language
from reactstep.tools.source.syntax import SYNTAX_LANGUAGES, parse

__all__ = ["Chunk", "FileOutline", "Import", "Symbol", "chunk_file", "detect_language", "outline_file"]

logger = logging.getLogger("reactstep.chunking")


@dataclass(frozen=True)
class Chunk:
    """A run of whole lines of one file, with what it defines."""

    path: str  # project-relative POSIX path
    start_line: int  # 1-based, inclusive
    end_line: int  # 1-based, inclusive
    language: str
    kind: str  # function | method | class | module | window
    symbol: str  # qualified name, "" for module-level code and windows
    signature: str  # the definition's header, "" if none
    content: str  # lines start_line..end_line joined with "\n"

    @property
    def content_hash(self) -> str:
        """Hex sha256 of path, lines, symbol and content: the same across runs and machines."""
        key = "\0".join((self.path, str(self.start_line), str(self.end_line), self.symbol, self.content))
        return hashlib.sha256(key.encode("utf-8", errors="surrogatepass")).hexdigest()


@dataclass(frozen=True)
class Symbol:
    """A named definition, for find_definition."""

    name: str
    qualified_name: str
    kind: str  # function | method | class | variable
    path: str
    line: int  # where the header starts, below any decorators
    end_line: int
    signature: str
    docstring: str  # first paragraph, "" if none


@dataclass(frozen=True)
class Import:
    """One imported module, for find_importers: `from a.b import c` is module "a.b", names ("c",)."""

    path: str
    line: int
    module: str
    names: tuple[str, ...]


@dataclass(frozen=True)
class FileOutline:
    """Everything one parse of a file yields."""

    chunks: list[Chunk]
    symbols: list[Symbol]
    imports: list[Import]


@dataclass(frozen=True)
class _Sizes:
    max_lines: int
    window_lines: int
    overlap_lines: int

    def __post_init__(self) -> None:
        if self.max_lines < 1 or not 0 <= self.overlap_lines < self.window_lines:
            raise ValueError(f"need max_lines >= 1 and 0 <= overlap_lines < window_lines, got {self}")


def chunk_file(
    path: str, text: str, *, max_lines: int = 80, window_lines: int = 60, overlap_lines: int = 10
) -> list[Chunk]:
    """The chunks of one file; [] for an empty file or one detect_language says not to index."""
    return outline_file(
        path, text, max_lines=max_lines, window_lines=window_lines, overlap_lines=overlap_lines
    ).chunks


def outline_file(
    path: str, text: str, *, max_lines: int = 80, window_lines: int = 60, overlap_lines: int = 10
) -> FileOutline:
    """The chunks, symbols and imports of one file; a parse that fails falls back to line windows."""
    sizes = _Sizes(max_lines, window_lines, overlap_lines)
    language = detect_language(path)
    lines = _split_lines(text)
    if language is None or not any(line.strip() for line in lines):
        return FileOutline([], [], [])
    chunker = _Chunker(path, language, lines, sizes)
    if language in SYNTAX_LANGUAGES:
        try:
            return _outline_syntax(chunker, text)
        except Exception:
            # tree-sitter tolerates broken code; this guards our walk of its tree (a grammar quirk we missed,
            # nesting deeper than the recursion limit), which must not cost a file its place in the index.
            logger.warning("syntax chunking failed for %s; using line windows", path, exc_info=True)
    return FileOutline(chunker.gap_chunks(1, len(lines), (), "window", "", ""), [], [])


def _outline_syntax(chunker: _Chunker, text: str) -> FileOutline:
    source = text.encode("utf-8", errors="replace")
    root = parse(chunker.language, source)
    found = read_definitions(chunker.language, root, source)
    chunks = chunker.gap_chunks(1, len(chunker.lines), found.definitions, "module", "", "")
    for definition in found.definitions:
        chunks.extend(chunker.definition_chunks(definition))
    imports = [
        Import(chunker.path, statement.line, statement.module, statement.names)
        for statement in read_imports(chunker.language, root)
    ]
    chunks.sort(key=lambda chunk: (chunk.start_line, chunk.end_line))
    return FileOutline(chunks, _symbols(chunker.path, found), imports)


def _symbols(path: str, found: Definitions) -> list[Symbol]:
    """Functions, methods, classes and variables; impls and namespaces name nothing of their own."""
    definitions = _flatten(found.definitions) + found.variables
    symbols = [
        Symbol(d.name, d.qualified_name, d.kind, path, d.line, d.end_line, d.signature, d.docstring)
        for d in definitions
        if d.kind in ("function", "method", "class", "variable")
    ]
    return sorted(symbols, key=lambda symbol: (symbol.line, symbol.end_line))


def _flatten(definitions: list[Definition] | tuple[Definition, ...]) -> list[Definition]:
    return [nested for d in definitions for nested in (d, *_flatten(d.members))]


def _split_lines(text: str) -> list[str]:
    """Lines as tree-sitter counts them: split at "\\n" only, a trailing newline ending the last line."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line.removesuffix("\r") for line in lines]


@dataclass(frozen=True)
class _Chunker:
    """Turns definitions and the gaps between them into chunks of one file."""

    path: str
    language: str
    lines: list[str]
    sizes: _Sizes

    def definition_chunks(self, definition: Definition) -> list[Chunk]:
        """The chunks of a definition and of the definitions nested in it."""
        d = definition
        if d.kind in ("function", "method"):
            spans = self.windows(d.start_line, d.end_line, limit=self.sizes.max_lines)
            return [self.chunk(start, end, d.kind, d.qualified_name, d.signature) for start, end in spans]
        kind = "module" if d.kind == "namespace" else "class"
        if d.end_line - d.start_line + 1 <= self.sizes.max_lines:
            chunks = [self.chunk(d.start_line, d.end_line, kind, d.qualified_name, d.signature)]
        else:
            # A long class keeps its header and the code between members; members get their own chunks.
            chunks = self.gap_chunks(d.start_line, d.end_line, d.members, kind, d.qualified_name, d.signature)
        for member in d.members:
            chunks.extend(self.definition_chunks(member))
        return chunks

    def gap_chunks(
        self,
        start: int,
        end: int,
        members: list[Definition] | tuple[Definition, ...],
        kind: str,
        symbol: str,
        signature: str,
    ) -> list[Chunk]:
        """Line windows over the lines of start..end outside `members`, trimmed of blank lines."""
        chunks = []
        for gap_start, gap_end in _gaps(start, end, [(m.start_line, m.end_line) for m in members]):
            first, last = self.trim_blank(gap_start, gap_end)
            for window_start, window_end in self.windows(first, last, limit=self.sizes.window_lines):
                if self.has_text(window_start, window_end):
                    chunks.append(self.chunk(window_start, window_end, kind, symbol, signature))
        return chunks

    def windows(self, start: int, end: int, *, limit: int) -> list[tuple[int, int]]:
        """start..end whole when it has at most `limit` lines, else overlapping windows of window_lines."""
        if end - start + 1 <= limit:
            return [(start, end)] if start <= end else []
        step = self.sizes.window_lines - self.sizes.overlap_lines
        spans = []
        window_start = start
        while True:
            window_end = min(window_start + self.sizes.window_lines - 1, end)
            spans.append((window_start, window_end))
            if window_end == end:
                return spans
            window_start += step

    def trim_blank(self, start: int, end: int) -> tuple[int, int]:
        """start..end without its leading and trailing blank lines (start > end when all are blank)."""
        while start <= end and not self.lines[start - 1].strip():
            start += 1
        while end >= start and not self.lines[end - 1].strip():
            end -= 1
        return start, end

    def has_text(self, start: int, end: int) -> bool:
        return any(line.strip() for line in self.lines[start - 1 : end])

    def chunk(self, start: int, end: int, kind: str, symbol: str, signature: str) -> Chunk:
        content = "\n".join(self.lines[start - 1 : end])
        return Chunk(self.path, start, end, self.language, kind, symbol, signature, content)


def _gaps(start: int, end: int, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The runs of start..end that no span covers."""
    gaps = []
    line = start
    for span_start, span_end in sorted(spans):
        if span_start > line:
            gaps.append((line, min(span_start - 1, end)))
        line = max(line, span_end + 1)
    if line <= end:
        gaps.append((line, end))
    return gaps
