"""Which language a project file is written in, judged by its name, and which files are not worth indexing."""

from __future__ import annotations

from pathlib import PurePosixPath

__all__ = ["detect_language"]

_BY_EXTENSION = {
    **dict.fromkeys((".py", ".pyi"), "python"),
    **dict.fromkeys((".js", ".mjs", ".cjs", ".jsx"), "javascript"),
    **dict.fromkeys((".ts", ".mts", ".cts"), "typescript"),
    ".tsx": "tsx",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
    **dict.fromkeys((".md", ".markdown", ".mdx"), "markdown"),
    **dict.fromkeys((".yaml", ".yml"), "yaml"),
    ".toml": "toml",
    **dict.fromkeys((".json", ".jsonc"), "json"),
    **dict.fromkeys((".ini", ".cfg", ".conf"), "ini"),
    **dict.fromkeys((".txt", ".text"), "text"),
    ".rst": "restructuredtext",
    **dict.fromkeys((".html", ".htm"), "html"),
    **dict.fromkeys((".css", ".scss", ".less"), "css"),
    **dict.fromkeys((".sh", ".bash", ".zsh"), "shell"),
    ".sql": "sql",
    ".xml": "xml",
    **dict.fromkeys((".c", ".h"), "c"),
    **dict.fromkeys((".cc", ".cpp", ".cxx", ".hpp", ".hh"), "cpp"),
    ".cs": "csharp",
    ".rb": "ruby",
    ".php": "php",
    **dict.fromkeys((".kt", ".kts"), "kotlin"),
    ".swift": "swift",
    ".scala": "scala",
    ".lua": "lua",
    ".proto": "protobuf",
    **dict.fromkeys((".graphql", ".gql"), "graphql"),
    ".vue": "vue",
    ".svelte": "svelte",
    ".j2": "jinja",
}
_BY_NAME = {"dockerfile": "dockerfile", "makefile": "make", "cmakelists.txt": "cmake"}
# Generated or machine-oriented files: indexing them floods search with noise.
_LOCK_FILES = frozenset(
    {"package-lock.json", "yarn.lock", "pnpm-lock.yaml", "poetry.lock", "uv.lock", "pipfile.lock"}
    | {"cargo.lock", "gemfile.lock", "composer.lock", "go.sum", "bun.lockb"}
)
_SKIPPED_SUFFIXES = (".min.js", ".min.css", ".map", ".lock", ".svg")
_BINARY_EXTENSIONS = frozenset(
    {".png", ".jpg", ".jpeg", ".gif", ".bmp", ".ico", ".webp", ".pdf", ".zip", ".gz", ".tgz", ".bz2"}
    | {".xz", ".7z", ".tar", ".jar", ".war", ".whl", ".so", ".dylib", ".dll", ".exe", ".bin", ".o", ".a"}
    | {".pyc", ".pyo", ".class", ".woff", ".woff2", ".ttf", ".otf", ".eot", ".mp3", ".mp4", ".wav", ".avi"}
    | {".mov", ".sqlite", ".db", ".parquet", ".npy", ".pkl", ".pt", ".onnx", ".safetensors"}
)


def detect_language(path: str) -> str | None:
    """The language of `path` by its name; "text" when unknown; None for files not worth indexing."""
    name = PurePosixPath(path).name.lower()
    suffix = PurePosixPath(name).suffix
    if name in _LOCK_FILES or name.endswith(_SKIPPED_SUFFIXES) or suffix in _BINARY_EXTENSIONS:
        return None
    return _BY_EXTENSION.get(suffix) or _BY_NAME.get(name) or "text"
