"""The dates in S3 replies, read as botocore reads them but without its general date parser.

Part of the S3 back-end (s3.py installs parse_timestamp into its client's response parsers).
"""

import contextlib
from datetime import datetime
from typing import Any

from botocore.utils import parse_timestamp as botocore_parse_timestamp
from botocore.utils import tzutc

_MONTH_NAMES = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")

_MONTHS = {name: n for n, name in enumerate(_MONTH_NAMES, 1)}


def parse_timestamp(value: Any) -> Any:
    """botocore's timestamp parser with a fast path for the HTTP date of every GET and HEAD reply.

    botocore hands any date to dateutil's general parser, some 45 µs per
    Last-Modified header; "Wed, 25 Nov 2026 23:15:24 GMT" is read here into the same value
    (UTC, dateutil's tzutc), and every other form still goes to botocore's own parser.
    """
    if isinstance(value, str) and len(value) == 29 and value[3:5] == ", " and value.endswith(" GMT"):
        month = _MONTHS.get(value[8:11])
        fields = (value[5:7], value[12:16], value[17:19], value[20:22], value[23:25])
        if month is not None and all(field.isdigit() for field in fields):
            with contextlib.suppress(ValueError):
                day, year, hour, minute, second = map(int, fields)
                return datetime(year, month, day, hour, minute, second, tzinfo=tzutc())
    return botocore_parse_timestamp(value)
