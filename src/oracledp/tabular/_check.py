"""Checking a table against a schema without fitting: :func:`check_table`.

Every problem a fit would refuse, one line each, for any table the data engine reads (like
:func:`~oracledp.tabular.read_aggregated`): entries still read from the
data, unresolved columns, repeated, missing or extra columns, and per column undeclared
levels, numbers outside the bounds, text in a numeric column, missing cells without a policy,
undeclared labels.  By column and rule only: never a record value, a row or a count of rows.
"""

from __future__ import annotations

from typing import Any

from oracledp._errors import TableInputError
from oracledp.tabular._cells import warn_clipped
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


def check_table(data: Any, schema: TableSchema, *, sep: str = ",", ignore_extra: bool = False,
                with_target: bool = True, engine: str = "duckdb",
                scheduler: str | None = None) -> list[str]:
    """Every problem of ``data`` for ``schema``, one string each, without fitting; an empty
    list when a fit would accept it.

    ``data``: whatever :func:`~oracledp.tabular.read_aggregated` reads (a CSV, Parquet file,
    directory or glob, or a DataFrame), in one pass of the data engine, so any size can be
    checked.  Listed: the schema's entries still marked ``"from_data": true``
    and its unresolved columns; a column name repeated in the header; missing columns (with
    ``with_target``, the target too) and, unless ``ignore_extra``, columns the schema does not
    mention; per column, undeclared levels, numbers outside the bounds (unless the column
    declares ``"out_of_bounds": "clip"``: a ClippedValuesWarning names those columns), text in
    a numeric column and missing cells without a 'missing' policy; undeclared labels.  A file
    that cannot be read (empty, not UTF-8, wrong delimiter, no rows) is one problem and ends
    the check.  By column and rule only: no record value, row or count of rows.
    ``engine="dask"`` (``scheduler`` as in :func:`~oracledp.tabular.read_aggregated`) runs
    the same pass on a Dask cluster.
    """
    from oracledp.tabular._engine import ENGINES, scan_table

    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {', '.join(map(repr, ENGINES))}, got {engine!r}")

    if not isinstance(schema, TableSchema):
        raise TypeError(f"schema must be a TableSchema, got {type(schema).__name__}")
    problems = _unconfirmed(schema)
    try:
        if engine == "dask":
            from oracledp.tabular._dask import scan_table_dask

            scan = scan_table_dask(data, schema, sep=sep, ignore_extra=ignore_extra,
                                   scheduler=scheduler, with_target=with_target, codes=False)
        else:
            scan = scan_table(data, schema, sep=sep, with_target=with_target,
                              ignore_extra=ignore_extra, codes=False)
    except TableInputError as exc:
        return [*problems, str(exc)]
    warn_clipped(scan.clipped)
    return [*problems, *(scan.found[k] for k in sorted(scan.found))]
