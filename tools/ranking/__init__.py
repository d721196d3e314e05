"""How code_search ranks chunks: hybrid retrieval, the fusion of its rankings and the names a query mentions."""
