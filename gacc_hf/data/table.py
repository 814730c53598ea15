"""CSV and TSV files read into rows: every cell is text, the header names the columns.

Parsing is pandas' (`read_csv`, the parser `datasets`' own csv builder uses), asked to keep every cell as the
text written: no type guessing (`007` stays `007`, not 7) and no missing-value guessing (`NA`, `None` and
`null` are answers like any other; an empty cell is the empty string). A header naming a column twice is
refused (pandas would rename the second one `name.1`), as is a row with more cells than the header. Each row
carries the line it starts on, counted from 1 with the header on line 1, so a problem names the line a
user sees in an editor even when a quoted cell spans several lines.
"""

from __future__ import annotations

import csv
import io
from typing import Any

from gacc_hf.data.schema import DataSourceError

SEPARATORS = {".csv": ",", ".tsv": "\t"}


def record_lines(text: str) -> list[int]:
    """The line each non-blank record of CSV text starts on (the header's included), quotes followed
    across lines the way the standard CSV dialect writes them (`""` inside a quoted cell is one quote).

    >>> record_lines('a,b\\n1,"two\\nlines"\\n\\n3,x\\n')
    [1, 2, 5]
    """
    starts: list[int] = []
    inside = False
    for n, line in enumerate(io.StringIO(text, newline=""), 1):
        if not inside and line.strip("\r\n"):
            starts.append(n)
        inside ^= line.count('"') % 2 == 1
    return starts


def read_table(data: bytes, path: str, suffix: str) -> tuple[list[dict[str, Any]], list[int] | None]:
    """The rows of a CSV (`.csv`) or TSV (`.tsv`) file's bytes, and the line each starts on (None when the
    lines cannot be told). Raises DataSourceError naming the file when it cannot be read as a table."""
    import pandas as pd

    sep = SEPARATORS[suffix]
    try:
        text = data.decode("utf-8-sig")
        frame = pd.read_csv(
            io.StringIO(text), sep=sep, dtype=str, keep_default_na=False, na_filter=False, index_col=False
        )
    except UnicodeDecodeError as exc:
        raise DataSourceError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    except (ValueError, csv.Error) as exc:  # pandas' ParserError and EmptyDataError are ValueErrors
        reason = " ".join(str(exc).split())
        raise DataSourceError(f"{path}: not a readable {suffix[1:].upper()} file: {reason}") from exc
    header = next(csv.reader(io.StringIO(text, newline=""), delimiter=sep), [])
    twice = sorted({name for name in header if header.count(name) > 1})
    if twice:
        raise DataSourceError(f"{path}: the header names the column(s) {', '.join(map(repr, twice))} twice")
    rows = frame.to_dict("records")
    lines = record_lines(text)[1:]
    return rows, lines if len(lines) == len(rows) else None
