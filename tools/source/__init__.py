"""What a source file says: its language, syntax tree, chunks, definitions, imports and entry points."""
