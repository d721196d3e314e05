"""The write machinery: approval tokens, the preview-then-write flow and diffs."""
