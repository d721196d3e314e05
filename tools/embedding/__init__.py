"""Text to vectors: the local embedding models (dense) and the word vectors of lexical search (sparse)."""
