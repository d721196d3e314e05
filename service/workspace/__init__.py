"""The project's files and index as the server works on them: execute_action and indexing."""
