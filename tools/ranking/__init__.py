"""How code_search ranks chunks: hybrid retrieval, the fusion of its rankings, the names a query mentions."""
