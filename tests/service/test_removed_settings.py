"""A removed setting never silently does nothing: set in the environment (or passed to Settings), it is
an invalid setting, one line naming what took its place, and `reactstep serve` exits 2."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

from reactstep.contract.step import MAX_HISTORY_ITEMS
from reactstep.contract.sync import MAX_MANIFEST_FILES
from reactstep.service.http.app import OVERLOAD_RETRY_AFTER_S, QUEUE_TIMEOUT_S
from reactstep.service.http.readiness import READINESS_TIMEOUT_S
from reactstep.service.limits import MAX_JSON_DEPTH, MAX_REPLY_CHARS
from reactstep.service.llm.config import DEFAULT_MAX_TOKENS, DEFAULT_TEMPERATURE
from reactstep.service.llm.retries import RETRY_MAX_S
from reactstep.service.removed_settings import REMOVED
from reactstep.service.settings import Settings
from reactstep.service.settings_errors import settings_problems
from reactstep.service.step.react_step import LOOP_REPEATS, MAX_OBSERVATION_CHARS, OVERVIEW_MAX_CHARS
from reactstep.tools.ranking.fusion import RetrievalConfig
from reactstep.tools.registry import ToolLimits
from reactstep.tools.store.s3_clients import S3Config
from reactstep.tools.vector_store.backend_choice import VectorConfig

LIMITS, RANKING = ToolLimits(), RetrievalConfig()
# Each "now fixed at" value is the constant the server uses.
FIXED = {
    "llm_temperature": DEFAULT_TEMPERATURE,
    "llm_max_tokens": DEFAULT_MAX_TOKENS,
    "llm_max_reply_chars": MAX_REPLY_CHARS,
    "llm_retry_max_s": RETRY_MAX_S,
    "max_observation_chars": MAX_OBSERVATION_CHARS,
    "loop_repeats": LOOP_REPEATS,
    "s3_max_attempts": S3Config().max_attempts,
    "vector_optimize_after": VectorConfig().optimize_after,
    "search_mode": RANKING.mode,
    "search_dense_weight": RANKING.dense_weight,
    "search_lexical_weight": RANKING.lexical_weight,
    "search_name_weight": RANKING.name_weight,
    "code_search_max_results": LIMITS.code_search_max_results,
    "code_search_max_chars": LIMITS.code_search_max_chars,
    "project_overview_max_chars": OVERVIEW_MAX_CHARS,
    "read_file_max_lines": LIMITS.read_file_max_lines,
    "read_file_max_bytes": LIMITS.read_file_max_bytes,
    "list_files_max_entries": LIMITS.list_files_max_entries,
    "list_files_page_size": LIMITS.list_files_page_size,
    "sync_max_files": MAX_MANIFEST_FILES,
    "max_history_items": MAX_HISTORY_ITEMS,
    "max_json_depth": MAX_JSON_DEPTH,
    "queue_timeout_s": QUEUE_TIMEOUT_S,
    "overload_retry_after_s": OVERLOAD_RETRY_AFTER_S,
    "readiness_timeout_s": READINESS_TIMEOUT_S,
}


def _shown(value: object) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


@pytest.mark.parametrize("name", sorted(FIXED))
def test_a_fixed_value_is_the_constant_the_server_uses(name: str) -> None:
    assert REMOVED[name].startswith(f"now fixed at {_shown(FIXED[name])}")


def test_every_removed_setting_is_gone_and_says_what_replaced_it() -> None:
    assert not REMOVED.keys() & Settings.model_fields.keys()
    replaced = {name: what for name, what in REMOVED.items() if name not in FIXED}
    assert replaced == {
        "index_max_file_bytes": "use REACTSTEP_FILE_MAX_BYTES",
        "grep_max_file_bytes": "use REACTSTEP_FILE_MAX_BYTES",
        "write_max_bytes": "use REACTSTEP_FILE_MAX_BYTES",
        "sync_max_body_bytes": "use REACTSTEP_MAX_BODY_BYTES",
        "max_reading_bodies": "now four per REACTSTEP_MAX_CONCURRENT_REQUESTS",
        "mcp_json_response": "now fixed at true: one JSON body per MCP POST",
    }


@pytest.mark.parametrize(
    ("variable", "line"),
    [
        ("REACTSTEP_WRITE_MAX_BYTES", "REACTSTEP_WRITE_MAX_BYTES: removed; use REACTSTEP_FILE_MAX_BYTES"),
        ("reactstep_search_lexical_weight", "REACTSTEP_SEARCH_LEXICAL_WEIGHT: removed; now fixed at 0.7"),
    ],
)
def test_a_removed_variable_in_the_environment_is_an_invalid_setting(
    monkeypatch: pytest.MonkeyPatch, variable: str, line: str
) -> None:
    monkeypatch.setenv(variable, "1")
    with pytest.raises(ValidationError) as caught:
        Settings()
    assert settings_problems(caught.value) == [line]


def test_each_removed_setting_is_one_line_and_others_still_count(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REACTSTEP_MAX_JSON_DEPTH", "8")
    with pytest.raises(ValidationError) as caught:
        Settings(sync_max_body_bytes=10)
    assert settings_problems(caught.value) == [
        "REACTSTEP_MAX_JSON_DEPTH: removed; now fixed at 32",
        "REACTSTEP_SYNC_MAX_BODY_BYTES: removed; use REACTSTEP_MAX_BODY_BYTES",
    ]


def test_the_clients_own_variables_do_not_stop_the_server(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REACTSTEP_CLIENT_API_KEY", "k")
    monkeypatch.setenv("REACTSTEP_UPLOAD_MAX_FILE_BYTES", "100")
    monkeypatch.setenv("REACTSTEP_SERVER", "http://127.0.0.1:1")
    assert Settings().file_max_bytes == 1_000_000


def test_serve_with_a_removed_variable_exits_2_with_one_line(tmp_path: Path) -> None:
    env = os.environ | {"REACTSTEP_DATA_DIR": str(tmp_path), "REACTSTEP_GREP_MAX_FILE_BYTES": "5"}
    reactstep = Path(sys.executable).with_name("reactstep")
    done = subprocess.run(
        [str(reactstep), "serve", "--port", "0"], env=env, capture_output=True, text=True, timeout=120
    )
    assert (done.returncode, done.stderr) == (
        2,
        "error: REACTSTEP_GREP_MAX_FILE_BYTES: removed; use REACTSTEP_FILE_MAX_BYTES\n",
    )
