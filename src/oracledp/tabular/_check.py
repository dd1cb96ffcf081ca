"""Checking a table against a schema without fitting: :func:`check_table`.

Every problem a fit would refuse, one line each, for a CSV read in chunks (like
:func:`~oracledp.tabular.read_csv_aggregated`) or a DataFrame: entries still read from the
data, unresolved columns, repeated, missing or extra columns, and per column undeclared
levels, numbers outside the bounds, text in a numeric column, missing cells without a policy,
undeclared labels.  By column and rule only: never a record value, a row or a count of rows.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from oracledp._errors import TableInputError
from oracledp.tabular._aggregated import CHUNK_ROWS
from oracledp.tabular._cells import warn_clipped
from oracledp.tabular._csv import _check_header, _chunks, _source_label
from oracledp.tabular._schema import TableSchema


def _unconfirmed(schema: TableSchema) -> list[str]:
    """One line per entry still marked ``"from_data": true``."""
    lines = [f"column {c.name!r}: still \"from_data\": true (read from the data: not private); "
             "replace or confirm its entry, then delete the flag"
             for c in schema.columns if c.from_data]
    if schema.target_from_data:
        lines.append(f"target {schema.target!r}: its labels are still \"from_data\": true; "
                     "replace or confirm them, then delete the flag")
    return lines


def check_table(data: pd.DataFrame | str | Path | bytes, schema: TableSchema, *,
                sep: str = ",", ignore_extra: bool = False, with_target: bool = True,
                chunksize: int | None = None) -> list[str]:
    """Every problem of ``data`` (a CSV path or bytes, or a DataFrame) for ``schema``, one
    string each, without fitting; an empty list when a fit would accept it.

    A CSV is streamed in chunks of ``chunksize`` rows (default :data:`CHUNK_ROWS`), so any
    size can be checked.  Listed: the schema's entries still marked ``"from_data": true``
    and its unresolved columns; a column name repeated in the header; missing columns (with
    ``with_target``, the target too) and, unless ``ignore_extra``, columns the schema does not
    mention; per column, undeclared levels, numbers outside the bounds (unless the column
    declares ``"out_of_bounds": "clip"``: a ClippedValuesWarning names those columns), text in
    a numeric column and missing cells without a 'missing' policy; undeclared labels.  A file
    that cannot be read (empty, not UTF-8, wrong delimiter, no rows) is one problem and ends
    the check.  By column and rule only: no record value, row or count of rows.
    """
    if not isinstance(schema, TableSchema):
        raise TypeError(f"schema must be a TableSchema, got {type(schema).__name__}")
    problems = _unconfirmed(schema)
    found: dict[tuple[int, int], str] = {}
    clipped: set[str] = set()
    if isinstance(data, pd.DataFrame):
        found.update(schema._scan(data, with_target=with_target, ignore_extra=ignore_extra,
                                  clipped=clipped)[0])
    else:
        label = _source_label(data)
        try:
            for i, chunk in enumerate(_chunks(data, sep, chunksize or CHUNK_ROWS, label)):
                if i == 0:
                    _check_header(list(chunk.columns), schema, with_target, sep, label)
                found.update(schema._scan(chunk, with_target=with_target,
                                          ignore_extra=ignore_extra, clipped=clipped)[0])
        except TableInputError as exc:
            return [*problems, str(exc)]
    warn_clipped(clipped)
    return [*problems, *(found[k] for k in sorted(found))]
