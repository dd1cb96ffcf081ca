"""The data engine: a table in any format reduced to its distinct encoded rows and label counts.

Every mechanism here needs only the aggregated table (the distinct encoded rows and how many
records carry each label), so reading, checking and counting are one pass of an embedded
engine (DuckDB: out of core, multi-threaded) over the file, whatever its size:

* **Sources.** A CSV file (plain, gzip or zstd, told by its first bytes), a Parquet file, a
  directory of Parquet files or a glob of them; a pandas DataFrame; a Polars DataFrame or an
  Arrow table (through DuckDB's Arrow scan: needs ``pyarrow``, which those bring).
* **One pass.** The query encodes each *plain* cell in SQL: a categorical cell that writes a
  declared level exactly, a numeric cell that writes a plain decimal (``-?digits[.digits]``,
  at most 15 digits, which every correctly rounded parser reads as the same double, DuckDB's
  and pandas' alike) or is a number of a typed column, inside its bounds (or clipped to them
  where the schema declares ``"out_of_bounds": "clip"``) and does not write one of the
  schema's ``missing_values`` (such a cell is missing, whatever number it writes).  Every
  other cell is kept as its text, and the query groups by the codes and those texts:
  ``SELECT codes, texts, count(*)
  ... GROUP BY ALL``.
* **The rules are the schema's, by construction.** Each rule of :meth:`TableSchema.check
  <oracledp.tabular.TableSchema.check>` reads one cell at a time, so the problems of a column
  are those of its distinct cells.  The texts the query kept are few (distinct values, not
  records) and are checked and encoded by the schema's own code
  (:meth:`TableSchema._scan_cells <oracledp.tabular.TableSchema>`); the plain cells' SQL
  codes equal the schema's (tested against :meth:`TableSchema.encode` on random tables).
* **Refusals** come after the whole input was read and before anything random, one
  :class:`~oracledp._errors.BoundsViolation` listing every problem by column and rule, or one
  :class:`~oracledp._errors.TableInputError` for a file that cannot be read.  No message
  carries a record value, a row index or a count: DuckDB's own messages (which may quote a
  line of the file) are never passed on.

The record counts and the file's size depend on the data: they are used to fit (every fit
here takes n as public) and shown on the user's own terminal as progress, never released
otherwise.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from oracledp._errors import TableInputError
from oracledp.tabular._cells import _Cells, _table_violation
from oracledp.tabular._sources import (
    MEMORY_LIMIT,
    _fail,
    _open,
    _quote,
    _Source,
    _text_of,
    bytes_as_file,
    connect,
)

if TYPE_CHECKING:
    from oracledp.tabular._csv import Progress
    from oracledp.tabular._schema import TableSchema

__all__ = ["ENGINES", "Scan", "merge_columns", "merge_rows", "scan_table"]

#: The engines: ``"duckdb"`` (default, this machine) and ``"dask"`` (a Dask cluster, see
#: :mod:`oracledp.tabular._dask`).
ENGINES = ("duckdb", "dask")


#: A numeric text cell is encoded in the pass when it has at most 15 characters, all digits,
#: '-' or '.', and DuckDB reads it as a number: such a text has at most 15 significant
#: digits, so every correctly rounded parser (DuckDB's, pandas') reads the same double
#: (tested on random texts of these characters).  Any other cell goes to the schema's code.
_NOT_PLAIN = r"[^0-9.\-]"
_NUMERIC_TYPES = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT",
                  "USMALLINT", "UINTEGER", "UBIGINT", "UHUGEINT", "FLOAT", "DOUBLE")


# --- the query -------------------------------------------------------------------------------


def _double(x: float) -> str:
    """A double literal that DuckDB reads as exactly ``x`` (shortest round-trip text)."""
    return f"CAST({_quote(repr(float(x)))} AS DOUBLE)"


def _column_sql(schema: TableSchema, i: int, col: str, dtype: str
                ) -> tuple[list[str], list[str], str | None]:
    """The SQL of schema column ``i`` read from ``col``: ``(prepared, keys, clipped)``.

    ``prepared`` are computed once per cell in an inner query (for a numeric column ``x{i}``,
    the number of a plain cell, else NULL); ``keys`` are what the pass groups by: the text of
    a categorical cell (``t{i}``: levels are few, and the schema's own code maps each distinct
    text after the pass), or for a numeric column the code of a plain cell inside the bounds
    (``k{i}``, else -1) and the text of any other cell (``t{i}``, else NULL); ``clipped`` says
    whether a plain cell was clipped to the declared bounds (None where nothing clips)."""
    c = schema.columns[i]
    if c.kind == "categorical":
        return [f"{_text_of(col, dtype)} AS t{i}"], [f"t{i}"], None
    if dtype in _NUMERIC_TYPES:
        x = f"CASE WHEN isfinite(CAST({col} AS DOUBLE)) THEN CAST({col} AS DOUBLE) END"
    else:  # text: at most 15 characters among the digits, '-' and '.' (see _PLAIN), and
        # not one of the schema's missing values (a cell that writes one is missing whatever
        # number it writes: the schema's code reads it, as in predict).  Another type (a
        # Parquet boolean, a timestamp) is read as its text, as a categorical cell is.
        txt = col if dtype == "VARCHAR" else f"({_text_of(col, dtype)})"
        tokens = schema._missing_tokens(c.levels)
        token = (f" AND {txt} NOT IN ({', '.join(_quote(t) for t in tokens)})"
                 if tokens else "")
        x = (f"TRY_CAST(CASE WHEN length({txt}) <= 15 AND NOT regexp_matches({txt}, "
             f"{_quote(_NOT_PLAIN)}){token} THEN {txt} END AS DOUBLE)")
    prepared = [f"{x} AS x{i}", f"{col} AS v{i}"]
    lo, hi = _double(c.lower), _double(c.upper)
    xi = f"x{i}"
    # a gridded value past a bound by floating-point noise only is the bound's grid point
    # (Column.bound_tolerance, as TableSchema._scan reads it)
    tol = c.bound_tolerance
    inside = (f"({xi} BETWEEN {_double(c.lower - tol)} AND {_double(c.upper + tol)})" if tol
              else f"({xi} BETWEEN {lo} AND {hi})")
    clip = c.out_of_bounds == "clip"
    ok = inside if not clip else f"({xi} IS NOT NULL)"
    xc = f"least(greatest({xi}, {lo}), {hi})" if clip else xi
    if c.step is not None:
        value = (f"CAST(least(greatest(round_even(({xc} - {lo}) / {_double(c.step)}, 0), 0), "
                 f"{int(c.K)}) AS BIGINT)")
    else:
        value = " + ".join(f"({xc} >= {_double(b)})::BIGINT" for b in (c.bins or ())) or "0"
    keys = [f"CASE WHEN {ok} THEN {value} ELSE -1 END AS k{i}",
            f"CASE WHEN {ok} THEN NULL ELSE {_text_of(f'v{i}', dtype)} END AS t{i}"]
    clipped = f"({xi} IS NOT NULL AND NOT {inside})" if clip else None
    return prepared, keys, clipped


@dataclass
class Scan:
    """What one pass found: every problem with its rank (column, rule), the clipped columns,
    and (no problem) the distinct encoded rows ``codes`` with their label counts ``counts``
    (one column per label; one column of record counts without the target)."""

    found: dict[tuple[int, int], str]
    clipped: set[str]
    codes: NDArray[np.integer] | None
    counts: NDArray[np.int64] | None

    def raise_problems(self) -> None:
        if self.found:
            raise _table_violation([self.found[k] for k in sorted(self.found)])


def _header_problems(schema: TableSchema, header: list[str], with_target: bool,
                     ignore_extra: bool) -> dict[tuple[int, int], str]:
    """The schema's header rules (repeated, spaced, missing, extra and unresolved columns) on
    the names as written, through the schema's own scan of a table without rows."""
    empty = pd.DataFrame({j: pd.Series([], dtype=object) for j in range(len(header))})
    empty.columns = header
    return dict(schema._scan(empty, with_target=with_target, ignore_extra=ignore_extra)[0])


def _readable(schema: TableSchema, header: list[str], with_target: bool) -> dict[str, int]:
    """Schema column (and target) name -> its position in the header, for the names written
    exactly once."""
    wanted = [c.name for c in schema.columns if c.kind != "unresolved"]
    wanted += [schema.target] if with_target else []
    return {n: header.index(n) for n in wanted if header.count(n) == 1}


def _run(con: Any, sql: str, report: Progress | None, size: int | None) -> dict[str, Any]:
    """Execute ``sql`` (in a worker thread when ``report`` is given, polling DuckDB's progress
    once a second) and fetch the result as numpy arrays."""
    if report is None:
        return con.execute(sql).fetchnumpy()
    out: dict[str, Any] = {}

    def work() -> None:
        try:
            out["result"] = con.execute(sql).fetchnumpy()
        except BaseException as exc:
            out["error"] = exc

    total = size if size else 100
    report("reading", 0, total)
    worker = threading.Thread(target=work, daemon=True)
    worker.start()
    while worker.is_alive():
        worker.join(1.0)
        if worker.is_alive():
            pct = con.query_progress()
            if pct is not None and pct >= 0:
                report("reading", int(total * min(pct, 100.0) / 100.0), total)
    if "error" in out:
        raise out["error"]
    report("reading", total, total)
    return out["result"]


def _column(result: dict[str, Any], key: str) -> NDArray[Any]:
    arr = result[key]
    if isinstance(arr, np.ma.MaskedArray):
        mask = np.ma.getmaskarray(arr)
        if arr.dtype == object:
            out = np.asarray(arr.data, dtype=object).copy()
            out[mask] = None
            return out
        return arr.filled(0)
    return np.asarray(arr)


def merge_rows(rows: NDArray[np.integer], counts: NDArray[np.int64]
               ) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """The distinct rows of ``rows`` in lexicographic order with their summed ``counts``
    (one per row, or one row of counts per row).

    Rows whose columns fit one int64 key (the product of the columns' value ranges below
    2**62) are merged through that key (:func:`merge_columns`: one int64 per row instead of
    int64 copies of the whole matrix); others by a lexicographic sort of the rows.  Both give
    the same rows in the same order and the same integer sums."""
    rows = np.asarray(rows)
    if rows.ndim == 2 and rows.shape[0] and rows.shape[1]:
        return merge_columns(lambda j: rows[:, j], rows.shape[1], counts,
                             lambda: np.asarray(rows, dtype=np.int64))
    return _merge_sorted(np.asarray(rows, dtype=np.int64), np.asarray(counts, dtype=np.int64))


def _merge_sorted(rows: NDArray[np.int64], counts: NDArray[np.int64]
                  ) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """:func:`merge_rows` by a lexicographic sort of the whole matrix."""
    if rows.shape[0] == 0:
        return rows, counts
    order = np.lexsort(rows.T[::-1]) if rows.shape[1] else np.arange(rows.shape[0])
    ordered = rows[order]
    new = np.ones(len(order), dtype=bool)
    new[1:] = (ordered[1:] != ordered[:-1]).any(axis=1) if rows.shape[1] else False
    group = np.cumsum(new) - 1
    out = np.zeros((int(group[-1]) + 1, *counts.shape[1:]), dtype=np.int64)
    np.add.at(out, group, counts[order])
    return ordered[new], out


#: A packed key stays below this bound (int64, with room for the arithmetic).
_KEY_SPAN = 2**62


def merge_columns(column: Any, m: int, counts: NDArray[np.integer], whole: Any
                  ) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """:func:`merge_rows` of the n x ``m`` integer matrix whose column ``j`` is
    ``column(j)`` (computed once each, one at a time), without building the matrix: each
    row becomes one int64 key, ``sum_j (x_j - lo_j) * prod_{k > j} span_k`` (``lo_j``,
    ``span_j``: the column's minimum and range), whose order is the lexicographic order of
    the rows; the keys are sorted, equal keys merged (counts summed in int64) and the
    distinct keys turned back into rows.  When the spans' product reaches 2**62, the matrix
    ``whole()`` is merged by a lexicographic sort instead (the same result)."""
    weights = np.asarray(counts, dtype=np.int64)
    key: NDArray[np.int64] | None = None
    lows, spans = [], []
    total = 1
    for j in range(m):
        x = np.asarray(column(j))
        if not np.issubdtype(x.dtype, np.integer):
            raise TypeError("merge_rows merges integer rows")
        lo, hi = (int(x.min()), int(x.max())) if x.size else (0, 0)
        span = hi - lo + 1
        total *= span
        if total >= _KEY_SPAN:
            del key, x
            return _merge_sorted(whole(), weights)
        part = x.astype(np.int64)
        del x
        if lo:
            part -= lo
        if key is None:
            key = part
        else:
            key *= span
            key += part
        del part
        lows.append(lo)
        spans.append(span)
    assert key is not None
    order = np.argsort(key, kind="stable")
    key = key[order]
    new = np.ones(len(key), dtype=bool)
    np.not_equal(key[1:], key[:-1], out=new[1:])
    group = np.cumsum(new) - 1
    out = np.zeros((int(group[-1]) + 1, *weights.shape[1:]), dtype=np.int64)
    np.add.at(out, group, weights[order])
    del order, group
    key = key[new]
    rows = np.empty((len(key), m), dtype=np.int64)
    for j in range(m - 1, -1, -1):
        key, rows[:, j] = np.divmod(key, spans[j])
        rows[:, j] += lows[j]
    return rows, out


def scan_table(data: Any, schema: TableSchema, *, sep: str = ",", with_target: bool = True,
               ignore_extra: bool = True, codes: bool = True,
               report: Progress | None = None, threads: int | None = None) -> Scan:
    """One pass of the engine over ``data`` (see the module docstring): every problem and,
    with ``codes`` and no problem, the distinct encoded rows with their label counts.

    Raises :class:`TableInputError` for a source that cannot be read (and for one without
    rows); the schema's problems are returned in the :class:`Scan` (its
    :meth:`Scan.raise_problems` raises them as one BoundsViolation).
    """
    import duckdb

    with_target = with_target and schema.has_target  # a schema without one: synthesis
    if isinstance(data, pd.DataFrame):
        return _scan_frame(data, schema, with_target, ignore_extra, codes)
    if isinstance(data, bytes):
        with bytes_as_file(data) as path:
            return scan_table(path, schema, sep=sep, with_target=with_target,
                              ignore_extra=ignore_extra, codes=codes, report=report,
                              threads=threads)
    con = connect(threads)
    src: _Source | None = None
    try:
        src = _open(con, data, sep)
        return _scan_source(con, src, schema, sep, with_target, ignore_extra, codes, report)
    except duckdb.Error as exc:
        label, kind = (src.label, src.kind) if src is not None else (str(data), "csv:none")
        raise _fail(label, kind, sep, exc) from None
    finally:
        con.close()


def _scan_frame(df: pd.DataFrame, schema: TableSchema, with_target: bool,
                ignore_extra: bool, codes: bool) -> Scan:
    """A pandas DataFrame (already in memory): the schema's own scan, then the counts."""
    if len(df) == 0:
        raise TableInputError("the input: the table has a header but no rows")
    clipped: set[str] = set()
    items, enc, y = schema._scan(df, with_target=with_target, codes=codes,
                                 ignore_extra=ignore_extra, clipped=clipped)
    found = dict(items)
    if found or not codes or enc is None:
        return Scan(found, clipped, None, None)
    width = len(schema.labels) if with_target else 1
    per_label = np.zeros((len(enc), width), dtype=np.int64)
    per_label[np.arange(len(enc)), 0 if y is None else y.astype(np.int64)] = 1
    rows, counts = merge_rows(enc, per_label)
    return Scan(found, clipped, rows, counts)


def group_query(schema: TableSchema, where: dict[str, int], types: Sequence[str],
                relation: str, with_target: bool) -> tuple[str, list[str]]:
    """The pass's SQL over ``relation`` (columns ``c0 ..`` of DuckDB ``types``; ``where``:
    schema column name -> position): ``(query, keys)``.  The query groups the records by
    ``keys`` (per numeric column ``k{i}``, ``t{i}``; per categorical column ``t{i}``; the
    target's text ``ty``: see :func:`_column_sql`) with ``bool_or`` of each clipping flag
    ``f{i}`` and the record count ``n``.  Partial results over parts of a table merge by
    grouping again on ``keys`` (summing ``n``, or-ing the flags): what the Dask engine does."""
    prepared, select, keys, flags = [], [], [], []
    for i, c in enumerate(schema.columns):
        if c.name not in where:
            continue
        j = where[c.name]
        first, grouped, clipped = _column_sql(schema, i, f"c{j}", types[j])
        prepared += first
        if c.kind == "categorical":
            keys += [f"t{i}"]
            select += [f"t{i}"]  # passed through from the inner query
        else:
            select += grouped
            keys += [f"k{i}", f"t{i}"]
        if clipped is not None:
            select.append(f"{clipped} AS f{i}")
            flags.append(f"bool_or(f{i}) AS f{i}")
    if with_target and schema.target in where:
        j = where[schema.target]
        prepared.append(f"{_text_of(f'c{j}', types[j])} AS ty")
        keys.append("ty")
        select.append("ty")
    inner = f"SELECT {', '.join(prepared) or '1 AS one'} FROM {relation}"
    middle = f"SELECT {', '.join(select) or '1 AS one'} FROM ({inner})"
    outer = (f"SELECT {', '.join([*keys, *flags, 'count(*) AS n'])} FROM ({middle}) "
             + (f"GROUP BY {', '.join(keys)}" if keys else ""))
    return outer, keys


def header_checks(schema: TableSchema, header: list[str], kind: str, label: str, sep: str,
                  with_target: bool, ignore_extra: bool, codes: bool
                  ) -> tuple[dict[tuple[int, int], str], dict[str, int]]:
    """Both engines' header refusals (a name written twice, when reading to fit; a CSV that
    parsed into one column) and problems, and where each schema column is."""
    from oracledp.tabular._csv import _check_header, _check_unique

    if codes and kind.startswith("csv"):  # reading to fit: refused by name at once
        _check_unique(header, label)
    found = _header_problems(schema, header, with_target, ignore_extra)
    if kind.startswith("csv") and len(header) == 1:
        _check_header(header, schema, with_target, sep, label)
    return found, _readable(schema, header, with_target)


def _scan_source(con: Any, src: _Source, schema: TableSchema, sep: str, with_target: bool,
                 ignore_extra: bool, codes: bool, report: Progress | None) -> Scan:
    found, where = header_checks(schema, src.header, src.kind, src.label, sep, with_target,
                                 ignore_extra, codes)
    outer, _ = group_query(schema, where, src.types, src.relation, with_target)
    _run(con, f"CREATE OR REPLACE TEMP TABLE oracledp_groups AS {outer}", report, src.size)
    return _finish(con, schema, where, with_target, codes, found, src.label,
                   "the file has a header but no rows" if src.kind.startswith("csv")
                   else "the table has no rows")


#: DuckDB's memory limit after the pass: what its tables hold plus this margin (bytes).
_AFTER_PASS_MARGIN = 256 * 2**20


def _release_cache(con: Any, margin: int = _AFTER_PASS_MARGIN) -> None:
    """Lower DuckDB's memory limit to the memory its tables hold plus ``margin`` (never above
    :data:`MEMORY_LIMIT`): DuckDB then frees the buffers it keeps cached after a query (at
    10 M rows, about 300 MB after the pass) instead of holding them while Python builds the
    arrays.  Only where DuckDB may put its data changes (it spills beyond the limit), never
    a result."""
    used = con.execute("SELECT coalesce(sum(memory_usage_bytes), 0) FROM duckdb_memory()"
                       ).fetchone()[0]
    number, unit = MEMORY_LIMIT[:-2], MEMORY_LIMIT[-2:].upper()
    cap = int(float(number) * {"KB": 2**10, "MB": 2**20, "GB": 2**30, "TB": 2**40}[unit])
    limit = max(min(int(used) + margin, cap), 32 * 2**20)
    con.execute(f"SET memory_limit = '{limit // 2**20}MB'")


def _finish(con: Any, schema: TableSchema, where: dict[str, int], with_target: bool,
            codes: bool, found: dict[tuple[int, int], str], label: str, empty: str) -> Scan:
    """From the pass's groups (temp table ``oracledp_groups``: the keys of
    :func:`_scan_source` and the record count ``n``) to the :class:`Scan`.

    Each column's distinct texts are checked and encoded by the schema's own code
    (:meth:`TableSchema._scan_cells`; the target's by its labels); without a problem, the
    groups are merged on their codes in DuckDB and fetched in lexicographic order of the
    codes, one row per distinct encoded row, one count per label."""
    table = "oracledp_groups"
    _release_cache(con)  # the pass's buffers are free now: give them back before fetching
    total = con.execute(f"SELECT coalesce(sum(n), 0) FROM {table}").fetchone()[0]
    if int(total) == 0:
        raise TableInputError(f"{label}: {empty}")
    names = {r[0] for r in con.execute(f"DESCRIBE {table}").fetchall()}
    clipped: set[str] = set()
    mapped: dict[str, pd.DataFrame] = {}
    for i, c in enumerate(schema.columns):
        if c.name not in where:
            continue
        if f"f{i}" in names and con.execute(f"SELECT bool_or(f{i}) FROM {table}").fetchone()[0]:
            clipped.add(c.name)
        uniq = [r[0] for r in con.execute(
            f"SELECT DISTINCT t{i} FROM {table} WHERE t{i} IS NOT NULL").fetchall()]
        if uniq:
            items, code = schema._scan_cells(i, pd.Series(uniq, dtype=object), clipped=clipped)
            found.update(items)
            mapped[f"t{i}"] = pd.DataFrame({"t": pd.Series(uniq, dtype=object),
                                            "c": np.asarray(code, dtype=np.int64)})
    if with_target and schema.target in where:
        uniq = [r[0] for r in con.execute(f"SELECT DISTINCT ty FROM {table}").fetchall()]
        cells = _Cells(pd.Series(uniq, dtype=object))
        lab = cells.level_codes(schema.labels)
        if (lab < 0).any():
            found[(len(schema.columns), 0)] = schema._target_problem(cells, lab)
        mapped["ty"] = pd.DataFrame({"t": pd.Series(uniq, dtype=object),
                                     "c": np.asarray(lab, dtype=np.int64)})
    if found or not codes or len(where) < len(schema.columns) + int(with_target):
        return Scan(found, clipped, None, None)
    joins, exprs = [], []
    for key, frame in mapped.items():
        con.register(f"oracledp_map_{key}", frame)
        joins.append(f"LEFT JOIN oracledp_map_{key} AS m_{key} ON g.{key} = m_{key}.t")
    for i, c in enumerate(schema.columns):
        if c.kind == "categorical":
            code = f"m_t{i}.c"
        elif f"t{i}" in mapped:
            code = f"coalesce(m_t{i}.c, g.k{i})"
        else:
            code = f"g.k{i}"
        exprs.append(f"CAST({code} AS INTEGER) AS e{i}")  # codes < MAX_GRID + 2: int32
    exprs.append("CAST(m_ty.c AS INTEGER) AS y" if with_target else "0 AS y")
    order = ", ".join([*(f"e{i}" for i in range(len(schema.columns))), "y"])
    result = con.execute(
        f"SELECT {', '.join(exprs)}, sum(g.n)::BIGINT AS n FROM {table} AS g {' '.join(joins)} "
        f"GROUP BY ALL ORDER BY {order}").fetchnumpy()
    con.execute(f"DROP TABLE {table}")  # and the result: DuckDB holds nothing more
    _release_cache(con, 0)
    n = np.asarray(result.pop("n"), dtype=np.int64)
    y = np.asarray(result.pop("y"), dtype=np.intp)
    enc = np.empty((len(n), len(schema.columns)), dtype=np.int32)  # filled column by column:
    for i in range(len(schema.columns)):  # memory of one copy (100 M rows: 11 M distinct)
        enc[:, i] = result.pop(f"e{i}")
    new = np.zeros(len(n), dtype=bool)  # the first row of each distinct encoded row
    new[0] = True
    for i in range(len(schema.columns)):
        new[1:] |= enc[1:, i] != enc[:-1, i]
    group = np.cumsum(new) - 1
    width = len(schema.labels) if with_target else 1
    counts = np.zeros((int(group[-1]) + 1, width), dtype=np.int64)
    np.add.at(counts, (group, y), n)
    return Scan(found, clipped, enc[new], counts)

