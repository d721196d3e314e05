"""The S3 client's date parser gives exactly botocore's values, errors included."""

from typing import Any

import pytest
from botocore.utils import parse_timestamp as botocore_parse_timestamp

from reactstep.tools.store.s3_dates import parse_timestamp

DATES = [
    "Wed, 25 Nov 2026 23:15:24 GMT",
    "Sun, 06 Nov 1994 08:49:37 GMT",
    "Thu, 29 Feb 2024 00:00:00 GMT",
    "2026-11-25T23:15:24.000Z",
    "Wed, 25 Nov 2026 23:15:24 +0200",
    1700000000,
]
BAD = ["Wed, 31 Feb 2026 23:15:24 GMT", "Wed, 25 Foo 2026 23:15:24 GMT", "Wed, 2x Nov 2026 23:15:24 GMT"]


@pytest.mark.parametrize("value", DATES)
def test_same_value_and_zone_as_botocore(value: Any) -> None:
    ours, theirs = parse_timestamp(value), botocore_parse_timestamp(value)
    assert ours == theirs
    assert repr(ours.tzinfo) == repr(theirs.tzinfo)


@pytest.mark.parametrize("value", BAD)
def test_same_error_as_botocore(value: str) -> None:
    with pytest.raises(ValueError) as ours:
        parse_timestamp(value)
    with pytest.raises(ValueError) as theirs:
        botocore_parse_timestamp(value)
    assert str(ours.value) == str(theirs.value)
