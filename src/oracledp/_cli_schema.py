"""``oracledp schema infer`` and ``oracledp schema check``: a schema proposed from a table, and a
table checked against a schema (every cell, one pass of the data engine; nothing is released).
Refusals are one ``error: ...`` line on stderr with exit code 2, never a record value or a row.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from oracledp._cli_table import (
    _ENGINE_CHECK,
    _SCHEDULER,
    _SEP,
    _check_scheduler,
    _clipping_on_stderr,
    _error,
    _fail,
    _load_schema,
    _reading,
    _warn,
)
from oracledp._errors import OracleDPError


def schema_infer(
    data: Annotated[Path, typer.Argument(help="CSV file with a header line, or Parquet.")],
    target: Annotated[
        str | None,
        typer.Option("--target", help="The label column (two labels) a classifier learns. "
                                       "Leave it out for a table to synthesize only: every "
                                       "column is then a feature column (a 3-class outcome "
                                       "too).")
    ] = None,
    sep: Annotated[str, _SEP] = ",",
    max_levels: Annotated[
        int, typer.Option("--max-levels", min=1,
                          help="Text columns with more distinct values are left unresolved "
                               "(and so is a --categorical column of integers whose range is "
                               "wider).")
    ] = 50,
    categorical: Annotated[
        list[str] | None,
        typer.Option("--categorical", metavar="NAME",
                     help="Propose this column as categorical (repeat for several): whole "
                          "numbers get every integer from their smallest to their largest "
                          "value as a level. Integer codes are numeric otherwise.")
    ] = None,
) -> None:
    """Propose a schema from DATA (NOT private): JSON on stdout, to be confirmed by hand."""
    from oracledp.tabular import TableSchema, read_csv
    from oracledp.tabular._csv import delimiter_hint

    if target is not None and not target.strip():
        _fail("--target must name the label column, got an empty name")
    try:
        with _reading(data) as report:
            df = read_csv(data, sep=sep, verbose=report)
        names = list(map(str, df.columns))
        hint = delimiter_hint(names, sep) if target not in names else ""
        if hint:  # one column: the delimiter is likely wrong
            which = ("" if target is None
                     else f", so the target column {target!r} is not in it")
            _fail(f"{data}: the file parsed into a single column with delimiter {sep!r}"
                  f"{which}; is the delimiter right?{hint}")
        schema, warnings = TableSchema.infer(df, target=target, max_levels=max_levels,
                                             categorical=categorical or ())
    except (OracleDPError, ValueError) as exc:
        _fail(str(exc) if str(exc).startswith(f"{data}:") else f"{data}: {exc}")
    typer.echo(schema.to_json())
    _warn(f"every level, bound, step and label in this schema was read from {data} and is "
          "marked \"from_data\": true. Reading them from private data is not differentially "
          "private: replace them with public values (or confirm they are public) and delete "
          f"the flags; `oracledp {'fit' if schema.has_target else 'synth fit'}` refuses the "
          "schema until then.")
    for w in warnings:
        _warn(w)
    if not schema.has_target:
        _warn("no --target: every column is a feature column and the schema serves `oracledp "
              "synth` only (the classifiers need a target with two labels).")
    elif schema.intercept:
        _warn("the schema adds the public intercept feature \"(intercept)\" (\"intercept\": "
              "true); set it to false for halfspaces through the origin.")


def schema_check(
    data: Annotated[Path, typer.Argument(help="The table (with its target, if the schema has one): CSV (plain, gzip, zstd; a header line) or Parquet (a file, a directory or a glob).")],
    schema_path: Annotated[Path, typer.Option("--schema", help="The table schema (JSON).")],
    sep: Annotated[str, _SEP] = ",",
    ignore_extra: Annotated[
        bool, typer.Option("--ignore-extra", help="Leave out data columns the schema does "
                                                  "not mention (a problem otherwise).")
    ] = False,
    engine: Annotated[str, _ENGINE_CHECK] = "duckdb",
    scheduler: Annotated[str | None, _SCHEDULER] = None,
) -> None:
    """Check DATA against a schema without fitting: every problem, one line each (exit 2)."""
    from oracledp.tabular import check_table

    _check_scheduler(engine, scheduler)
    schema = _load_schema(schema_path)
    try:
        with _clipping_on_stderr():
            problems = check_table(data, schema, sep=sep, ignore_extra=ignore_extra,
                                   engine=engine, scheduler=scheduler)
    except MemoryError:  # pragma: no cover - one chunk at a time
        _fail(f"{data}: not enough memory to read a chunk of the file")
    for problem in problems:
        _error(problem)
    if problems:
        raise typer.Exit(2)
    if schema.has_target:
        typer.echo(f"ok: {data} fits the schema {schema_path} (every cell of its "
                   f"{len(schema.columns)} declared column(s) and the target checked); "
                   "`oracledp fit` would accept it.")
    else:
        typer.echo(f"ok: {data} fits the schema {schema_path} (every cell of its "
                   f"{len(schema.columns)} declared column(s) checked; the schema has no "
                   "target); `oracledp synth fit` would accept it.")
