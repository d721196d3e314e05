"""Tests for tools/source/chunking.py: exact chunks, symbols and imports per language, coverage."""

import logging

import pytest

from reactstep.tools.source.chunking import Chunk, Symbol, chunk_file, detect_language, outline_file

PYTHON = '''\
"""User service."""

import logging
from .models import User, Group as G

LIMIT = 10


# Cache results per user.
@cached
@traced(level=2)
def get_user(self, user_id: int) -> User:
    """Fetch one user.

    Raises KeyError.
    """
    return User(user_id)


class UserService:
    """Serves users."""

    retries = 3

    # Look one up.
    def get_user(self, user_id: int) -> User:
        return self.store[user_id]

    class Cache:
        def clear(self):
            pass


if __name__ == "__main__":
    main()
'''

PYTHON_LONG = '''\
import os


def long_function(a, b):
    x = 1
    x = 2
    x = 3
    x = 4
    x = 5
    x = 6
    x = 7
    x = 8
    x = 9
    x = 10
    x = 11
    x = 12
    x = 13
    x = 14
    x = 15
    x = 16
    return x


class Big(Base):
    """A long class."""

    name = "big"
    size = 2

    def first(self):
        return 1

    def second(self):
        return 2

    colour = "red"

    @staticmethod
    def third():
        return 3
'''

JAVASCRIPT = """\
import express, { Router, json as parseJson } from "express";
const fs = require("fs");
const { join, resolve: resolvePath } = require("path");

// Handle one request.
const handler = async (req, res) => {
  res.send("ok");
};

/**
 * Build the app.
 * @param {object} options
 */
export function buildApp(options) {
  return express();
}

class Store extends Base {
  constructor(db) {
    super();
    this.db = db;
  }

  get(id) {
    return this.db[id];
  }

  static create = () => new Store({});
}

module.exports = { handler };
"""

TYPESCRIPT = """\
import type { Request } from "./types";
import * as path from "path";
export { helper } from "./helpers";

export interface Repo<T> {
  find(id: number): T;
}

@Injectable()
export class UserRepo implements Repo<User> {
  @Inject() private db: Db;

  find(id: number): User {
    return this.db.get(id);
  }
}

export const double = (n: number): number => n * 2;

namespace Shapes {
  export function area(r: number): number {
    return r * r;
  }
}
"""

TSX = """\
import React from "react";
import "./button.css";

const Lazy = React.lazy(() => import("./Lazy"));

export const Button = ({ label }: Props) => {
  return <button>{label}</button>;
};

export default function App() {
  return <Button label="hi" />;
}
"""

GO = """\
package server

import (
\t"fmt"
\t"net/http"
)

// Server serves HTTP.
type Server struct {
\taddr string
}

// Handle answers one request.
func (s *Server) Handle(w http.ResponseWriter, r *http.Request) {
\tfmt.Fprintln(w, s.addr)
}

func New(addr string) *Server {
\treturn &Server{addr: addr}
}
"""

RUST = """\
use std::collections::HashMap;
use crate::store::{Store, Key};

/// A cache of values.
#[derive(Debug)]
pub struct Cache {
    items: HashMap<String, i32>,
}

impl Cache {
    /// Look a key up.
    pub fn get(&self, key: &str) -> Option<&i32> {
        self.items.get(key)
    }
}

pub fn build() -> Cache {
    Cache { items: HashMap::new() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds() {
        build();
    }
}
"""

JAVA = """\
package com.example;

import java.util.List;
import java.util.Map;

/** Serves users. */
@Service
public class UserService {
    private final Map<Integer, User> users;

    /**
     * Find a user.
     */
    @Override
    public User getUser(int id) {
        return users.get(id);
    }

    static class Cache {
        void clear() {}
    }
}
"""

PYTHON_BROKEN = """\
import os

def ok():
    return 1

def broken(:
    return [

class Fine:
    def method(self):
        return 2
"""
GUIDE = "".join(f"Line {number} of the guide.\n" for number in range(1, 26))

FIXTURES = {
    "app/service.py": PYTHON,
    "app/long.py": PYTHON_LONG,
    "web/handlers.js": JAVASCRIPT,
    "web/app.ts": TYPESCRIPT,
    "web/Button.tsx": TSX,
    "server/server.go": GO,
    "src/lib.rs": RUST,
    "src/UserService.java": JAVA,
    "app/broken.py": PYTHON_BROKEN,
    "docs/GUIDE.md": GUIDE,
}

ChunkRow = tuple[str, int, int, str, str, str]


def chunk_rows(path: str, **options: int) -> list[ChunkRow]:
    """The chunks of a fixture as (path, start_line, end_line, kind, symbol, signature)."""
    chunks = chunk_file(path, FIXTURES[path], **options)
    return [(c.path, c.start_line, c.end_line, c.kind, c.symbol, c.signature) for c in chunks]


GET_USER = "def get_user(self, user_id: int) -> User:"
LONG = "def long_function(a, b):"


@pytest.mark.parametrize(
    ("path", "options", "expected"),
    [
        pytest.param(
            "app/service.py",
            {},
            [
                # Module docstring, imports and constants; then a function with its comment and decorators.
                ("app/service.py", 1, 6, "module", "", ""),
                ("app/service.py", 9, 17, "function", "get_user", GET_USER),
                ("app/service.py", 20, 31, "class", "UserService", "class UserService:"),
                ("app/service.py", 25, 27, "method", "UserService.get_user", GET_USER),
                ("app/service.py", 29, 31, "class", "UserService.Cache", "class Cache:"),
                ("app/service.py", 30, 31, "method", "UserService.Cache.clear", "def clear(self):"),
                ("app/service.py", 34, 35, "module", "", ""),
            ],
            id="python",
        ),
        pytest.param(
            "app/long.py",
            {"max_lines": 12, "window_lines": 8, "overlap_lines": 2},
            [
                ("app/long.py", 1, 1, "module", "", ""),
                # 18 lines > max_lines: windows of 8 lines stepping by 6, each keeping symbol and signature.
                ("app/long.py", 4, 11, "function", "long_function", LONG),
                ("app/long.py", 10, 17, "function", "long_function", LONG),
                ("app/long.py", 16, 21, "function", "long_function", LONG),
                # 17 lines > max_lines: the header up to the first method, the gap between methods, methods.
                ("app/long.py", 24, 28, "class", "Big", "class Big(Base):"),
                ("app/long.py", 30, 31, "method", "Big.first", "def first(self):"),
                ("app/long.py", 33, 34, "method", "Big.second", "def second(self):"),
                ("app/long.py", 36, 36, "class", "Big", "class Big(Base):"),
                ("app/long.py", 38, 40, "method", "Big.third", "def third():"),
            ],
            id="python-long-function-and-class",
        ),
        pytest.param(
            "app/long.py",
            {},
            [
                ("app/long.py", 1, 1, "module", "", ""),
                ("app/long.py", 4, 21, "function", "long_function", LONG),
                ("app/long.py", 24, 40, "class", "Big", "class Big(Base):"),
                ("app/long.py", 30, 31, "method", "Big.first", "def first(self):"),
                ("app/long.py", 33, 34, "method", "Big.second", "def second(self):"),
                ("app/long.py", 38, 40, "method", "Big.third", "def third():"),
            ],
            id="python-within-max-lines",
        ),
        pytest.param(
            "web/handlers.js",
            {},
            [
                ("web/handlers.js", 1, 3, "module", "", ""),
                ("web/handlers.js", 5, 8, "function", "handler", "const handler = async (req, res) =>"),
                ("web/handlers.js", 10, 16, "function", "buildApp", "export function buildApp(options)"),
                ("web/handlers.js", 18, 29, "class", "Store", "class Store extends Base"),
                ("web/handlers.js", 19, 22, "method", "Store.constructor", "constructor(db)"),
                ("web/handlers.js", 24, 26, "method", "Store.get", "get(id)"),
                ("web/handlers.js", 28, 28, "method", "Store.create", "static create = () =>"),
                ("web/handlers.js", 31, 31, "module", "", ""),
            ],
            id="javascript",
        ),
        pytest.param(
            "web/app.ts",
            {},
            [
                ("web/app.ts", 1, 3, "module", "", ""),
                ("web/app.ts", 5, 7, "class", "Repo", "export interface Repo<T>"),
                ("web/app.ts", 9, 16, "class", "UserRepo", "export class UserRepo implements Repo<User>"),
                ("web/app.ts", 13, 15, "method", "UserRepo.find", "find(id: number): User"),
                ("web/app.ts", 18, 18, "function", "double", "export const double = (n: number): number =>"),
                ("web/app.ts", 20, 24, "module", "Shapes", "namespace Shapes"),
                ("web/app.ts", 21, 23, "function", "Shapes.area", "export function area(r: number): number"),
            ],
            id="typescript",
        ),
        pytest.param(
            "web/Button.tsx",
            {},
            [
                ("web/Button.tsx", 1, 4, "module", "", ""),
                ("web/Button.tsx", 6, 8, "function", "Button", "export const Button = ({ label }: Props) =>"),
                ("web/Button.tsx", 10, 12, "function", "App", "export default function App()"),
            ],
            id="tsx",
        ),
        pytest.param(
            "server/server.go",
            {},
            [
                ("server/server.go", 1, 6, "module", "", ""),
                ("server/server.go", 8, 11, "class", "Server", "type Server struct"),
                (
                    "server/server.go",
                    13,
                    16,
                    "method",
                    "Server.Handle",
                    "func (s *Server) Handle(w http.ResponseWriter, r *http.Request)",
                ),
                ("server/server.go", 18, 20, "function", "New", "func New(addr string) *Server"),
            ],
            id="go",
        ),
        pytest.param(
            "src/lib.rs",
            {},
            [
                ("src/lib.rs", 1, 2, "module", "", ""),
                # Doc comments and attributes belong to the item below them.
                ("src/lib.rs", 4, 8, "class", "Cache", "pub struct Cache"),
                ("src/lib.rs", 10, 15, "class", "Cache", "impl Cache"),
                ("src/lib.rs", 11, 14, "method", "Cache.get", "pub fn get(&self, key: &str) -> Option<&i32>"),
                ("src/lib.rs", 17, 19, "function", "build", "pub fn build() -> Cache"),
                ("src/lib.rs", 21, 29, "module", "tests", "mod tests"),
                ("src/lib.rs", 25, 28, "function", "tests.builds", "fn builds()"),
            ],
            id="rust",
        ),
        pytest.param(
            "src/UserService.java",
            {},
            [
                ("src/UserService.java", 1, 4, "module", "", ""),
                ("src/UserService.java", 6, 22, "class", "UserService", "public class UserService"),
                (
                    "src/UserService.java",
                    11,
                    17,
                    "method",
                    "UserService.getUser",
                    "public User getUser(int id)",
                ),
                ("src/UserService.java", 19, 21, "class", "UserService.Cache", "static class Cache"),
                ("src/UserService.java", 20, 20, "method", "UserService.Cache.clear", "void clear()"),
            ],
            id="java",
        ),
        pytest.param(
            "app/broken.py",
            {},
            [
                ("app/broken.py", 1, 1, "module", "", ""),
                ("app/broken.py", 3, 4, "function", "ok", "def ok():"),
                ("app/broken.py", 6, 7, "function", "broken", "def broken(:\n    return ["),
                ("app/broken.py", 9, 11, "class", "Fine", "class Fine:"),
                ("app/broken.py", 10, 11, "method", "Fine.method", "def method(self):"),
            ],
            id="python-broken-syntax",
        ),
        pytest.param(
            "docs/GUIDE.md",
            {"window_lines": 10, "overlap_lines": 3},
            [
                ("docs/GUIDE.md", 1, 10, "window", "", ""),
                ("docs/GUIDE.md", 8, 17, "window", "", ""),
                ("docs/GUIDE.md", 15, 24, "window", "", ""),
                ("docs/GUIDE.md", 22, 25, "window", "", ""),
            ],
            id="markdown-windows",
        ),
    ],
)
def test_chunks(path: str, options: dict[str, int], expected: list[ChunkRow]) -> None:
    assert chunk_rows(path, **options) == expected


@pytest.mark.parametrize("path", sorted(FIXTURES))
@pytest.mark.parametrize("options", [{}, {"max_lines": 3, "window_lines": 2, "overlap_lines": 1}])
def test_every_non_blank_line_is_in_a_chunk_whose_content_is_the_files_lines(
    path: str, options: dict[str, int]
) -> None:
    lines = FIXTURES[path].splitlines()
    chunks = chunk_file(path, FIXTURES[path], **options)
    covered = {line for chunk in chunks for line in range(chunk.start_line, chunk.end_line + 1)}
    non_blank = {number for number, text in enumerate(lines, start=1) if text.strip()}
    assert non_blank - covered == set()
    assert [chunk.content for chunk in chunks] == [
        "\n".join(lines[chunk.start_line - 1 : chunk.end_line]) for chunk in chunks
    ]
    assert chunks == sorted(chunks, key=lambda chunk: (chunk.start_line, chunk.end_line))


@pytest.mark.parametrize(
    ("path", "language"),
    [
        ("app/service.py", "python"),
        ("web/handlers.js", "javascript"),
        ("web/app.ts", "typescript"),
        ("web/Button.tsx", "tsx"),
        ("server/server.go", "go"),
        ("src/lib.rs", "rust"),
        ("src/UserService.java", "java"),
        ("docs/GUIDE.md", "markdown"),
    ],
)
def test_chunks_carry_the_language(path: str, language: str) -> None:
    assert {chunk.language for chunk in chunk_file(path, FIXTURES[path])} == {language}


@pytest.mark.parametrize(
    ("path", "text", "expected"),
    [
        ("notes", "first\n\n\nsecond\n", [("notes", 1, 4, "window", "", "")]),
        ("config.yaml", "\n\nkey: value\n\n", [("config.yaml", 3, 3, "window", "", "")]),
        ("a.py", "def f():\r\n    return 1\r\n", [("a.py", 1, 2, "function", "f", "def f():")]),
        ("a.py", "", []),
        ("a.py", "\n   \n\t\n", []),
        ("package-lock.json", '{"lockfileVersion": 3}\n', []),
        ("dist/app.min.js", "var a=1;\n", []),
    ],
    ids=["plain-text", "blank-edges-trimmed", "crlf", "empty", "blank-only", "lock-file", "minified"],
)
def test_small_files(path: str, text: str, expected: list[ChunkRow]) -> None:
    chunks = chunk_file(path, text)
    assert [(c.path, c.start_line, c.end_line, c.kind, c.symbol, c.signature) for c in chunks] == expected


def test_a_file_the_syntax_walk_cannot_handle_falls_back_to_line_windows(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # 600 nested blocks go deeper than Python's recursion limit lets the definition walk follow.
    source = "".join("    " * depth + "if x:\n" for depth in range(600)) + "    " * 600 + "pass\n"
    with caplog.at_level(logging.WARNING, logger="reactstep.chunking"):
        outline = outline_file("deep.py", source)
    starts = list(range(1, 552, 50))
    assert [(c.start_line, c.end_line, c.kind, c.language) for c in outline.chunks] == [
        (start, min(start + 59, 601), "window", "python") for start in starts
    ]
    assert (outline.symbols, outline.imports) == ([], [])
    assert "syntax chunking failed for deep.py" in caplog.text


def test_content_drops_carriage_returns() -> None:
    assert chunk_file("a.py", "def f():\r\n    return 1\r\n")[0].content == "def f():\n    return 1"


def test_content_hash_is_stable_and_follows_content() -> None:
    chunk = Chunk("a.py", 1, 2, "python", "function", "f", "def f():", "def f():\n    return 1")
    assert chunk.content_hash == "910699b80f8ccf0b738461f27bbd9ffc9802f906c0ad69ebeda5121b3a302662"
    assert chunk_file("a.py", "def f():\n    return 1\n")[0].content_hash == chunk.content_hash
    assert chunk_file("a.py", "def f():\n    return 2\n")[0].content_hash != chunk.content_hash
    assert chunk_file("b.py", "def f():\n    return 1\n")[0].content_hash != chunk.content_hash


def test_outline_is_deterministic() -> None:
    assert outline_file("app/service.py", PYTHON) == outline_file("app/service.py", PYTHON)


@pytest.mark.parametrize(
    "options",
    [{"max_lines": 0}, {"window_lines": 5, "overlap_lines": 5}, {"overlap_lines": -1}],
)
def test_rejects_sizes_that_cannot_make_progress(options: dict[str, int]) -> None:
    with pytest.raises(ValueError, match="overlap_lines"):
        chunk_file("a.py", "x = 1\n", **options)


SymbolRow = tuple[str, str, str, int, int, str, str]


def symbol_rows(path: str) -> list[SymbolRow]:
    """The symbols of a fixture as (name, qualified_name, kind, line, end_line, signature, docstring)."""
    symbols = outline_file(path, FIXTURES[path]).symbols
    assert {symbol.path for symbol in symbols} == {path}
    return [(s.name, s.qualified_name, s.kind, s.line, s.end_line, s.signature, s.docstring) for s in symbols]


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        pytest.param(
            "app/service.py",
            [
                ("LIMIT", "LIMIT", "variable", 6, 6, "LIMIT = 10", ""),
                ("get_user", "get_user", "function", 12, 17, GET_USER, "Fetch one user."),
                ("UserService", "UserService", "class", 20, 31, "class UserService:", "Serves users."),
                ("retries", "UserService.retries", "variable", 23, 23, "retries = 3", ""),
                ("get_user", "UserService.get_user", "method", 26, 27, GET_USER, "Look one up."),
                ("Cache", "UserService.Cache", "class", 29, 31, "class Cache:", ""),
                ("clear", "UserService.Cache.clear", "method", 30, 31, "def clear(self):", ""),
            ],
            id="python",
        ),
        pytest.param(
            "web/handlers.js",
            [
                ("fs", "fs", "variable", 2, 2, 'const fs = require("fs");', ""),
                (
                    "handler",
                    "handler",
                    "function",
                    6,
                    8,
                    "const handler = async (req, res) =>",
                    "Handle one request.",
                ),
                (
                    "buildApp",
                    "buildApp",
                    "function",
                    14,
                    16,
                    "export function buildApp(options)",
                    "Build the app.",
                ),
                ("Store", "Store", "class", 18, 29, "class Store extends Base", ""),
                ("constructor", "Store.constructor", "method", 19, 22, "constructor(db)", ""),
                ("get", "Store.get", "method", 24, 26, "get(id)", ""),
                ("create", "Store.create", "method", 28, 28, "static create = () =>", ""),
            ],
            id="javascript",
        ),
        pytest.param(
            "web/app.ts",
            [
                ("Repo", "Repo", "class", 5, 7, "export interface Repo<T>", ""),
                ("UserRepo", "UserRepo", "class", 10, 16, "export class UserRepo implements Repo<User>", ""),
                ("find", "UserRepo.find", "method", 13, 15, "find(id: number): User", ""),
                ("double", "double", "function", 18, 18, "export const double = (n: number): number =>", ""),
                ("area", "Shapes.area", "function", 21, 23, "export function area(r: number): number", ""),
            ],
            id="typescript",
        ),
        pytest.param(
            "server/server.go",
            [
                ("Server", "Server", "class", 9, 11, "type Server struct", "Server serves HTTP."),
                (
                    "Handle",
                    "Server.Handle",
                    "method",
                    14,
                    16,
                    "func (s *Server) Handle(w http.ResponseWriter, r *http.Request)",
                    "Handle answers one request.",
                ),
                ("New", "New", "function", 18, 20, "func New(addr string) *Server", ""),
            ],
            id="go",
        ),
        pytest.param(
            "src/lib.rs",
            [
                ("Cache", "Cache", "class", 6, 8, "pub struct Cache", "A cache of values."),
                (
                    "get",
                    "Cache.get",
                    "method",
                    12,
                    14,
                    "pub fn get(&self, key: &str) -> Option<&i32>",
                    "Look a key up.",
                ),
                ("build", "build", "function", 17, 19, "pub fn build() -> Cache", ""),
                ("builds", "tests.builds", "function", 26, 28, "fn builds()", ""),
            ],
            id="rust",
        ),
        pytest.param(
            "src/UserService.java",
            [
                ("UserService", "UserService", "class", 8, 22, "public class UserService", "Serves users."),
                (
                    "users",
                    "UserService.users",
                    "variable",
                    9,
                    9,
                    "private final Map<Integer, User> users;",
                    "",
                ),
                (
                    "getUser",
                    "UserService.getUser",
                    "method",
                    15,
                    17,
                    "public User getUser(int id)",
                    "Find a user.",
                ),
                ("Cache", "UserService.Cache", "class", 19, 21, "static class Cache", ""),
                ("clear", "UserService.Cache.clear", "method", 20, 20, "void clear()", ""),
            ],
            id="java",
        ),
    ],
)
def test_symbols(path: str, expected: list[SymbolRow]) -> None:
    assert symbol_rows(path) == expected


def test_symbol_is_a_full_record() -> None:
    symbol = outline_file("app/service.py", PYTHON).symbols[1]
    assert symbol == Symbol(
        name="get_user",
        qualified_name="get_user",
        kind="function",
        path="app/service.py",
        line=12,
        end_line=17,
        signature=GET_USER,
        docstring="Fetch one user.",
    )


ImportRow = tuple[int, str, tuple[str, ...]]


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        pytest.param("app/service.py", [(3, "logging", ()), (4, ".models", ("User", "Group"))], id="python"),
        pytest.param(
            "web/handlers.js",
            [
                (1, "express", ("default", "Router", "json")),
                (2, "fs", ()),
                (3, "path", ("join", "resolve")),
            ],
            id="javascript-es-and-require",
        ),
        pytest.param(
            "web/app.ts",
            [(1, "./types", ("Request",)), (2, "path", ("*",)), (3, "./helpers", ("helper",))],
            id="typescript-type-namespace-and-reexport",
        ),
        pytest.param(
            "web/Button.tsx",
            [(1, "react", ("default",)), (2, "./button.css", ()), (4, "./Lazy", ())],
            id="tsx-side-effect-and-dynamic",
        ),
        pytest.param("server/server.go", [(4, "fmt", ()), (5, "net/http", ())], id="go"),
        pytest.param(
            "src/lib.rs",
            [
                (1, "std::collections", ("HashMap",)),
                (2, "crate::store", ("Store", "Key")),
                (23, "super", ("*",)),
            ],
            id="rust",
        ),
        pytest.param(
            "src/UserService.java", [(3, "java.util", ("List",)), (4, "java.util", ("Map",))], id="java"
        ),
    ],
)
def test_imports(path: str, expected: list[ImportRow]) -> None:
    imports = outline_file(path, FIXTURES[path]).imports
    assert {item.path for item in imports} == {path}
    assert [(item.line, item.module, item.names) for item in imports] == expected


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("import os.path, sys as system\n", [(1, "os.path", ()), (1, "sys", ())]),
        ("from . import models\n", [(1, ".", ("models",))]),
        ("from ..a.b import (c,\n    d as e)\n", [(1, "..a.b", ("c", "d"))]),
        ("from x import *\n", [(1, "x", ("*",))]),
        ("def f():\n    import json\n", [(2, "json", ())]),
    ],
    ids=["plain-and-aliased", "relative-package", "relative-multiline", "wildcard", "deferred"],
)
def test_python_imports(source: str, expected: list[ImportRow]) -> None:
    imports = outline_file("pkg/mod.py", source).imports
    assert [(item.line, item.module, item.names) for item in imports] == expected


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("src/app.py", "python"),
        ("typings/app.pyi", "python"),
        ("a.js", "javascript"),
        ("a.mjs", "javascript"),
        ("a.cjs", "javascript"),
        ("A.jsx", "javascript"),
        ("a.ts", "typescript"),
        ("A.tsx", "tsx"),
        ("main.go", "go"),
        ("lib.rs", "rust"),
        ("A.java", "java"),
        ("README.md", "markdown"),
        ("ci.yml", "yaml"),
        ("pyproject.toml", "toml"),
        ("package.json", "json"),
        ("notes.txt", "text"),
        ("LICENSE", "text"),
        ("Dockerfile", "dockerfile"),
        ("package-lock.json", None),
        ("yarn.lock", None),
        ("Cargo.lock", None),
        ("dist/vendor.min.js", None),
        ("logo.png", None),
        ("app.js.map", None),
    ],
)
def test_detect_language(path: str, expected: str | None) -> None:
    assert detect_language(path) == expected
