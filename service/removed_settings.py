"""Settings that were removed, each with what took its place, so setting one stops the server rather
than doing nothing: `REACTSTEP_<name>` in the environment is an invalid setting (exit 2, one line)."""

from collections.abc import Iterable

# name → what to do instead: another variable, or the value the server now always uses.
REMOVED: dict[str, str] = {
    "llm_temperature": "now fixed at 0; a request sets llm_config.temperature",
    "llm_max_tokens": "now fixed at 1024; a request sets llm_config.max_tokens",
    "llm_max_reply_chars": "now fixed at 100000",
    "llm_retry_max_s": "now fixed at 8",
    "max_observation_chars": "now fixed at 20000",
    "loop_repeats": "now fixed at 3",
    "s3_max_attempts": "now fixed at 3",
    "vector_optimize_after": "now fixed at 10000",
    "search_mode": "now fixed at hybrid",
    "search_dense_weight": "now fixed at 1",
    "search_lexical_weight": "now fixed at 0.7",
    "search_name_weight": "now fixed at 0.5",
    "code_search_max_results": "now fixed at 10; a call sets max_results",
    "code_search_max_chars": "now fixed at 12000",
    "project_overview_max_chars": "now fixed at 8000",
    "read_file_max_lines": "now fixed at 500",
    "read_file_max_bytes": "now fixed at 50000",
    "list_files_max_entries": "now fixed at 1000",
    "list_files_page_size": "now fixed at 100",
    "index_max_file_bytes": "use REACTSTEP_FILE_MAX_BYTES",
    "grep_max_file_bytes": "use REACTSTEP_FILE_MAX_BYTES",
    "write_max_bytes": "use REACTSTEP_FILE_MAX_BYTES",
    "sync_max_body_bytes": "use REACTSTEP_MAX_BODY_BYTES",
    "sync_max_files": "now fixed at 100000",
    "max_history_items": "now fixed at 200",
    "max_json_depth": "now fixed at 32",
    "queue_timeout_s": "now fixed at 10",
    "max_reading_bodies": "now four per REACTSTEP_MAX_CONCURRENT_REQUESTS",
    "overload_retry_after_s": "now fixed at 1",
    "readiness_timeout_s": "now fixed at 2",
    "mcp_json_response": "now fixed at true: one JSON body per MCP POST",
}


def removed_problems(names: Iterable[str]) -> list[str]:
    """One line per removed setting among `names` (field names, any case): its variable and what to do."""
    found = sorted({name.lower() for name in names} & REMOVED.keys())
    return [f"REACTSTEP_{name.upper()}: removed; {REMOVED[name]}" for name in found]
