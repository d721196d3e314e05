"""What is derived from a project's files and kept beside them: the index run, symbols and the overview."""
