"""Vectors for code_search: embeddings, sparse terms, the vector store back-ends and hybrid retrieval."""
