"""A REACTSTEP_ variable the settings model does not have is not a setting: the client's own variables
and the names of settings removed before 1.0 are left alone, and the server starts on its defaults."""

import pytest

from reactstep.service.settings import Settings


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("REACTSTEP_CLIENT_API_KEY", "k"),  # the client's own (client/config.py)
        ("REACTSTEP_SERVER", "http://127.0.0.1:1"),
        ("REACTSTEP_GREP_MAX_FILE_BYTES", "5"),  # removed before 1.0: REACTSTEP_FILE_MAX_BYTES took its place
        ("REACTSTEP_SEARCH_LEXICAL_WEIGHT", "0.2"),  # removed before 1.0: fixed at 0.7
    ],
)
def test_a_variable_that_is_no_setting_is_ignored(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str
) -> None:
    monkeypatch.setenv(variable, value)
    assert Settings().file_max_bytes == 1_000_000
    assert variable.removeprefix("REACTSTEP_").lower() not in Settings.model_fields
