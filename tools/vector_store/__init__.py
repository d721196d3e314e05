"""Where chunk vectors live: one VectorStore interface, Qdrant's engine in-process or a Qdrant server."""
