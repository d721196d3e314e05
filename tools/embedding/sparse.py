"""The lexical side of code search: text to BM25-style sparse vectors.

    text ─ tokenize ─┬─ encode_document: BM25 term-frequency saturation per token
                     └─ encode_query:    1.0 per unique token
    token ─ blake2b, 4 bytes, 31 bits ─ sparse index

Tokens are made for code. Every identifier-like run of letters and digits (joined by `_` or `-`)
is split on snake_case, kebab-case, camelCase/PascalCase and letter/digit boundaries, and each part
becomes a token, stemmed (Snowball English, ASCII parts only: `parsers`, `parsing`, `parsed` all
give pars); an identifier of several parts also gives one whole token, its parts joined without
separators and not stemmed. So `getUserName`, `GetUserName`, `get_user_name` and `get-user-name`
all give get, user, name, getusername: they match each other on all four tokens, and the words
"get user names" match them on three. Everything is lowercased; parts shorter than two characters,
tokens longer than 64 (hashes, base64) and a small stop list (see STOP_WORDS) are dropped.

Only term frequency lives here. IDF comes from the vector store: both back-ends configure the
sparse vector with Qdrant's IDF modifier, so a stored value times the query's 1.0 times the
store's IDF is a BM25 term score.
"""

import hashlib
import re
import threading
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache

import snowballstemmer

# Identifier-like runs: letters/digits, optionally joined by underscores or hyphens.
WORD = re.compile(r"[^\W_]+(?:[_-]+[^\W_]+)*")
# Parts of one ASCII segment: an acronym before a capitalised word (HTTP|Server), a word with an
# optional capital (get|User), a trailing acronym (parse|JSON), or a number (utf|8).
PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
SEPARATORS = re.compile(r"[_-]+")
MIN_TOKEN_LENGTH = 2
MAX_TOKEN_LENGTH = 64
# Bump when tokens or weights change: the points of each format live in a collection of their own
# (retrieval.collection_name), so an upgraded server re-indexes in full instead of mixing formats.
# 2: stemmed parts, question words dropped, BM25 lengths of function-sized chunks;
# 3: the collection also holds a "name" dense vector per chunk (index/chunk_text.name_text)
WORD_VECTORS_FORMAT = 3
INDEX_MASK = 0x7FFF_FFFF  # 31 bits: a non-negative index every Qdrant client and engine accepts

# Words that appear in nearly every chunk of some language or comment and so carry no signal.
STOP_WORDS = frozenset(
    {
        # English
        *("an", "and", "are", "as", "at", "be", "by", "for", "from", "in", "is", "it", "of", "on"),
        *("or", "that", "the", "this", "to", "with"),
        # how a question is asked, never what it is about
        *("how", "what", "where", "which", "who", "why", "when", "do", "does", "can", "should", "we", "you"),
        # keywords and literals shared by many languages
        *("def", "self", "return", "import", "if", "else", "elif", "not", "none", "null", "nil"),
        *("true", "false", "var", "let", "const", "function", "func", "fn", "end", "pass"),
    }
)


@dataclass(frozen=True)
class SparseVector:
    """A sparse vector: indices sorted ascending and unique, one value per index."""

    indices: tuple[int, ...]
    values: tuple[float, ...]


@dataclass(frozen=True)
class Bm25Params:
    """BM25's term-frequency knobs; the benchmark tunes them, the store supplies IDF."""

    k1: float = 1.5
    b: float = 0.75
    # Tokens in a typical chunk: the function-sized chunks of five packages' Python average about 55.
    # bench/retrieval_quality.py: 50 beats the 165 of 40-line windows by 0.03-0.06 MRR@10 (attrs, httpx).
    avg_len: float = 50.0


DEFAULT_BM25 = Bm25Params()


def tokenize(text: str) -> list[str]:
    """The tokens of `text`, in order, repeats kept: identifier parts, then the whole identifier."""
    tokens: list[str] = []
    for word in WORD.findall(text):
        parts = [part.lower() for part in split_identifier(word)]
        stems = (stem(part) for part in parts if is_signal(part))
        tokens.extend(token for token in stems if token not in STOP_WORDS)  # "returns" stems to a stop word
        whole = "".join(parts)
        if len(parts) > 1 and is_signal(whole):
            tokens.append(whole)
    return tokens


def split_identifier(word: str) -> list[str]:
    """`getHTTPResponse_v2` -> get, HTTP, Response, v, 2; a non-ASCII segment stays whole."""
    parts: list[str] = []
    for segment in SEPARATORS.split(word):
        parts.extend(PART.findall(segment) if segment.isascii() else [segment])
    return parts


_stemmers = threading.local()  # a Snowball stemmer keeps state while it works: one per thread


@lru_cache(maxsize=1 << 16)
def stem(part: str) -> str:
    """A lowercased ASCII part's Snowball (Porter 2) stem; other parts stay as they are."""
    if not part.isascii() or part.isdigit():
        return part
    stemmer = getattr(_stemmers, "english", None)
    if stemmer is None:
        stemmer = _stemmers.english = snowballstemmer.stemmer("english")
    result: str = stemmer.stemWord(part)
    return result


def is_signal(token: str) -> bool:
    """Whether a lowercased token is worth indexing."""
    return MIN_TOKEN_LENGTH <= len(token) <= MAX_TOKEN_LENGTH and token not in STOP_WORDS


def token_index(token: str) -> int:
    """A token's sparse index: stable across processes and versions (unlike `hash`)."""
    digest = hashlib.blake2b(token.encode("utf-8"), digest_size=4).digest()
    return int.from_bytes(digest, "big") & INDEX_MASK


def encode_document(text: str, params: Bm25Params = DEFAULT_BM25) -> SparseVector:
    """A chunk's vector: tf*(k1+1)/(tf+k1*(1-b+b*len/avg_len)) per token, len counting every token."""
    counts = index_counts(tokenize(text))
    length = sum(counts.values())
    norm = params.k1 * (1 - params.b + params.b * length / params.avg_len)
    weights = {index: tf * (params.k1 + 1) / (tf + norm) for index, tf in counts.items()}
    return to_vector(weights)


def encode_query(text: str) -> SparseVector:
    """A query's vector: 1.0 per unique token, so the score is the sum of matched documents' weights."""
    return to_vector(dict.fromkeys(index_counts(tokenize(text)), 1.0))


def index_counts(tokens: list[str]) -> Counter[int]:
    """Occurrences per sparse index; tokens whose hashes collide share one count."""
    return Counter(token_index(token) for token in tokens)


def to_vector(weights: dict[int, float]) -> SparseVector:
    """A SparseVector with its indices sorted."""
    indices = tuple(sorted(weights))
    return SparseVector(indices, tuple(weights[index] for index in indices))
