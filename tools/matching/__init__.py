"""Patterns from the model, matched in linear time: RE2 regexes and gitignore-style globs."""
