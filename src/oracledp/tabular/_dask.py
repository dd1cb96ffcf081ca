"""The Dask engine: the data engine's pass (:mod:`oracledp.tabular._engine`) on a Dask cluster.

``engine="dask"`` reads, checks and counts a table as the default engine does, with the
reading and the per-record work spread over the workers of a Dask cluster (a local one by
default, or the running cluster at ``scheduler``; ``docs/cluster.md``):

* **Workers** read the data themselves (Dask's ``read_csv`` with every cell as text, exactly
  as written, each block checked as the pandas reader checks a file: :func:`_read_block`;
  ``read_parquet`` with Arrow types), so a path or URL must be readable by them.  Each
  partition runs the default engine's own SQL
  (:func:`~oracledp.tabular._engine.group_query`) in a DuckDB connection on the worker and
  returns its records grouped by their codes and texts, with the clipping flags and the
  record counts: small partial counts, one row per distinct key in the partition.
* **The client** reads the header and makes the file-level checks with the default engine's
  code (same refusals, same messages), merges the partial counts (grouping again on the
  keys: summing the counts, or-ing the flags) and finishes with the default engine's code
  (:func:`~oracledp.tabular._engine._finish`: the distinct texts checked by the schema's own
  code, the rows in lexicographic order).  So the :class:`~oracledp.tabular._engine.Scan` is
  the default engine's, bit for bit, and the mechanism, which runs on the client from the
  counts, releases the same for the same data and seed.

A pandas or Dask DataFrame is scanned per partition by the schema's own code (as the default
engine scans a pandas DataFrame) and the partial counts merged on the client.

Dask is an extra: ``pip install 'oracledp[dask]'`` (``dask[dataframe]``, ``distributed``).
No message carries a record value, a row index or a count: the readers' messages (which may
quote a line of the file) are never passed on.
"""

from __future__ import annotations

import io
import logging
import os
import warnings
import zlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from oracledp._errors import TableInputError

if TYPE_CHECKING:
    from oracledp.tabular._engine import Scan
    from oracledp.tabular._schema import TableSchema

__all__ = ["scan_table_dask"]

_INSTALL = "pip install 'oracledp[dask]'"


def _require() -> None:
    try:
        import dask.dataframe  # noqa: F401
        import distributed  # noqa: F401
        import pyarrow  # noqa: F401
    except ImportError as exc:
        raise ImportError(f"engine='dask' needs Dask's dataframe and distributed packages "
                          f"({exc.name} is missing): {_INSTALL}") from None


@contextmanager
def _client(scheduler: Any) -> Iterator[Any]:
    """A Dask client: of a local cluster started here (``scheduler`` None, closed after), of
    the running cluster at ``scheduler`` (an address), or ``scheduler`` itself (a Client)."""
    import distributed

    if isinstance(scheduler, distributed.Client):
        yield scheduler
        return
    if scheduler is None:
        workers = max(1, min(4, os.cpu_count() or 1))
        # its workers' logs stay quiet: a task's error reaches the caller as a one-line
        # refusal, while a worker logs it with a traceback that may quote the data (review 18)
        with distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                      dashboard_address=None,
                                      silence_logs=logging.CRITICAL) as cluster, \
                distributed.Client(cluster, set_as_default=False) as client:
            yield client
        return
    if not isinstance(scheduler, str):
        raise TypeError("scheduler must be the address of a Dask scheduler (e.g. "
                        f"'tcp://host:8786'), a distributed.Client or None, got "
                        f"{type(scheduler).__name__}")
    try:
        client = distributed.Client(scheduler, set_as_default=False, timeout="30s")
    except OSError as exc:
        raise TableInputError(f"cannot reach the Dask scheduler at {scheduler} "
                              f"({type(exc).__name__})") from None
    with client:
        yield client


# --- the per-partition work (runs on the workers) --------------------------------------------


def _read_block(fh: IO[bytes], *, oracledp_label: str, **kwargs: Any) -> pd.DataFrame:
    """pandas' ``read_csv`` of one block of a CSV as Dask gives it (the header line, then
    whole lines of the file), with the pandas readers' refusals of a row whose field count
    is not the header's, by their code (:func:`~oracledp.tabular._csv.check_widths` on the
    block's own text; a delimiter closing every row is dropped, as they drop it).  Dask's
    sample (``nrows``), read on the client for the columns' types only, is not checked."""
    from oracledp.tabular._csv import (
        ROW_WIDTH,
        SpacedLines,
        _every_row_closed,
        _extra_fields,
        _parse_error,
        check_widths,
        fewer_fields,
    )

    label, sep = oracledp_label, kwargs["sep"]
    try:
        df = pd.read_csv(fh, **kwargs)
    except pd.errors.ParserError as exc:
        err = _parse_error(label, sep, exc)
        if ROW_WIDTH not in str(err):  # another parse error: its text ("EOF inside string
            # starting at row 363") is not passed on, not even to the worker's log (review
            # 18); the refusal says what it may be (review 19: an empty error had escaped)
            raise _parse_refusal(label, sep) from None
        raise err from None
    if kwargs.get("nrows") is not None:
        return _extra_fields(df, label, sep, lambda: True)
    data = fh.getvalue() if isinstance(fh, io.BytesIO) else b""
    text = data.decode(kwargs.get("encoding") or "utf-8")
    if "header" not in kwargs:  # a block after the first: Dask gives its lines alone, and
        # every check below skips a header line first (a short row at the block's start
        # had been taken for it): one of the names, ended as the block's lines end
        end = next((e for e in ("\r\n", "\n", "\r") if e in text), "\n")
        text = sep.join(kwargs["names"]) + end + text
        data = text.encode("utf-8")
    df = _extra_fields(df, label, sep, lambda: _every_row_closed(data, label, sep))
    spaced = SpacedLines(sep)
    spaced.feed(text)
    check_widths(df, spaced.done(),
                 lambda width: fewer_fields(io.StringIO(text, newline=""), sep, width), label)
    return df


def _partial_counts(part: pd.DataFrame, schema: TableSchema, where: dict[str, int],
                    with_target: bool) -> Any:
    """One partition's records grouped by the default engine's SQL: an Arrow table of the
    keys, the clipping flags and the record count ``n``.  The partition's columns are taken
    by position (``c0 ..``) with their Arrow types, as the default engine reads an Arrow
    table."""
    import pyarrow as pa

    from oracledp.tabular._engine import group_query
    from oracledp.tabular._sources import connect

    if not isinstance(part.index, pd.RangeIndex):
        # an index pandas made of the first fields (shifted columns): never from a CSV block
        # (_read_block refuses or drops the extra fields); refused as the reader's error
        raise ValueError("a row with more fields than the header")
    part = part.copy(deep=False)
    part.columns = [f"c{j}" for j in range(part.shape[1])]
    table = pa.Table.from_pandas(part, preserve_index=False)
    con = connect(1)
    try:
        rel = con.from_arrow(table)
        rel.create_view("oracledp_part")
        types = [str(t) for t in rel.types]
        sql, _ = group_query(schema, where, types, "oracledp_part", with_target)
        return con.sql(sql).to_arrow_table()
    finally:
        con.close()


def _frame_counts(part: pd.DataFrame, schema: TableSchema, with_target: bool,
                  ignore_extra: bool, codes: bool
                  ) -> tuple[int, dict[tuple[int, int], str], set[str], Any, Any]:
    """One partition of a DataFrame scanned by the schema's own code (as the default engine
    scans a pandas DataFrame): its problems, clipped columns and merged rows with counts."""
    from oracledp.tabular._engine import merge_rows

    clipped: set[str] = set()
    items, enc, y = schema._scan(part, with_target=with_target, codes=codes,
                                 ignore_extra=ignore_extra, clipped=clipped)
    found = dict(items)
    if found or not codes or enc is None or len(enc) == 0:
        return len(part), found, clipped, None, None
    width = len(schema.labels) if with_target else 1
    per_label = np.zeros((len(enc), width), dtype=np.int64)
    per_label[np.arange(len(enc)), 0 if y is None else y.astype(np.int64)] = 1
    rows, counts = merge_rows(enc, per_label)
    return len(part), found, clipped, rows, counts


# --- the client ------------------------------------------------------------------------------


def _compute(client: Any, parts: Sequence[Any]) -> list[Any]:
    return list(client.gather(client.compute(list(parts))))


def _reading_error(exc: BaseException, label: str, kind: str, sep: str) -> TableInputError | None:
    """A reader's error (raised on a worker) as the default engine's one-line refusal, which
    quotes nothing of the file; None for an error that is not the data's."""
    import duckdb
    import pyarrow as pa

    from oracledp.tabular._sources import _fail

    if isinstance(exc, TableInputError):  # the workers' own refusal (_read_block)
        return TableInputError(str(exc))
    if isinstance(exc, UnicodeDecodeError):
        return TableInputError(f"{label}: the file is not UTF-8 text; re-save it as UTF-8 "
                               "(e.g. from a spreadsheet: CSV UTF-8)")
    if kind.startswith("csv:gzip") and isinstance(exc, (EOFError, zlib.error)):
        # cut short (past what the client's header read decompressed) or a damaged stream
        return TableInputError(f"{label}: not a readable gzip file")
    if isinstance(exc, pd.errors.ParserError) and kind.startswith("csv"):
        return _parse_refusal(label, sep)
    if isinstance(exc, (pd.errors.ParserError, pd.errors.EmptyDataError, duckdb.Error,
                        pa.ArrowException, EOFError)) or (
            isinstance(exc, ValueError) and kind != "frame"):
        return _fail(label, kind, sep, Exception(""))
    if isinstance(exc, (FileNotFoundError, PermissionError, IsADirectoryError)):
        return TableInputError(f"{label}: a worker cannot read the file "
                               f"({type(exc).__name__}); paths must be readable by the "
                               "Dask workers")
    if isinstance(exc, OSError) and kind.startswith("csv:gzip"):
        return TableInputError(f"{label}: not a readable gzip file")
    return None


def _parse_refusal(label: str, sep: str) -> TableInputError:
    """A block pandas cannot parse, in the default engine's words, with the cause only Dask
    has: a block cut inside a quoted field (Dask cuts a CSV at line breaks, quoted or not;
    review 18: a file every other reader reads was refused for a cause it does not have)."""
    from oracledp.tabular._sources import _fail

    said = str(_fail(label, "csv:none", sep, Exception(""))).removesuffix(")")
    return TableInputError(f"{said}; or a quoted field holding a line break, where the Dask "
                           "engine's blocks cannot cut a file: the default engine reads such "
                           "a file)")


def _source(data: Any, sep: str, blocksize: Any) -> tuple[Any, list[str], str, str]:
    """``(ddf, header, label, kind)``: the Dask DataFrame the workers read (columns by
    position), the header as written, the label of messages and the format.  The header and
    the file-level refusals are the default engine's (run on the client)."""
    import dask.dataframe as dd
    import pyarrow as pa

    from oracledp.tabular._sources import _files, _format_of, _open, connect

    if isinstance(data, (str, Path)):
        path = str(data)
        label = path
        if "://" in path and not path.startswith("file://"):
            return _url_source(path, sep, blocksize)
        con = connect(1)
        try:
            src = _open(con, path, sep)  # the header, the file-level refusals
        finally:
            con.close()
        files = _files(path, label)
        kind = _format_of(files, label)
        if kind == "parquet":
            ddf = dd.read_parquet(files, dtype_backend="pyarrow")
            return ddf, src.header, label, kind
        return (_read_csv(files, sep, kind, src.header, blocksize, label), src.header, label,
                kind)
    module = type(data).__module__.split(".")[0]
    if module in ("pyarrow", "polars"):
        table = data.to_arrow() if module == "polars" else data
        if not isinstance(table, pa.Table):
            raise TypeError("data must be a pandas, Polars or Arrow table, or the path of a CSV "
                            f"or Parquet file, got {type(data).__name__}")
        frame = table.to_pandas(types_mapper=pd.ArrowDtype)
        header = [str(c) for c in table.column_names]
        parts = max(1, min(len(frame) // 100_000 + 1, 64))
        return dd.from_pandas(frame, npartitions=parts, sort=False), header, "the input", "arrow"
    raise TypeError("data must be a pandas, Polars, Dask or Arrow table, or the path of a CSV "
                    f"or Parquet file, got {type(data).__name__}")


def _read_csv(files: Sequence[str], sep: str, kind: str, header: list[str],
              blocksize: Any, label: str) -> Any:
    """Every cell as text exactly as written (no NA guessing, no space stripped), each block
    read by :func:`_read_block` (Dask's ``read_csv`` with that reader)."""
    from dask.dataframe.io.csv import read_pandas

    from oracledp.tabular._csv import (
        _text_stream,
        cr_line_ends_in,
        leading_blank_lines,
        one_column_rows,
    )

    compression = kind[4:]
    if compression == "zstd":
        raise TableInputError(f"{files[0]}: the Dask engine reads plain or gzip CSV and "
                              "Parquet; decompress this zstd file or use the default engine")

    def text(k: int = 0) -> Any:  # file k's text (newline=""), as the client reads it
        if "://" not in str(files[k]):
            return _text_stream(files[k], label)
        import fsspec  # a URL (Dask's own dependency)

        return fsspec.open(files[k], "rt", encoding="utf-8", newline="",
                           compression=None if compression == "none" else compression)

    # one column: an empty line is a row with an empty cell, as every reader reads it (and
    # blank lines before the header are skipped: Dask's warning on skiprows with a block
    # smaller than its sample is about a header found past the sample, not this)
    blank: dict[str, Any] = {}
    if len(header) == 1:
        with text() as fh:
            blank = one_column_rows(leading_blank_lines(fh))
    if not blank.get("skiprows"):
        blank.pop("skiprows", None)
    # a CR alone ends every line (old Mac files): Dask cuts its blocks at it, and pandas
    # reads an empty line before a row starting with an empty cell as read_csv does (it had
    # shifted that row by a field); a URL's file too (review 18).  One setting reads every
    # file: files whose lines end otherwise are refused (review 19: the rows of an LF file
    # after a CR-only one were dropped)
    cr = set()
    for k in range(len(files)):
        with text(k) as fh:
            cr.add(cr_line_ends_in(fh, sep))
    if len(cr) > 1:
        raise TableInputError(f"{label}: the files' lines end in different ways (a CR alone "
                              "in some, LF or CRLF in others): re-save them alike")
    lines = {"lineterminator": "\r"} if cr == {True} else {}
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Unexpected behavior can result from "
                                "passing skiprows", category=UserWarning)
        return read_pandas(
            _read_block, list(files), oracledp_label=label,
            sep=sep, header=0, names=[f"c{j}" for j in range(len(header))],
            dtype=str, keep_default_na=False, na_filter=False, skipinitialspace=False,
            quotechar='"', doublequote=True, encoding="utf-8", **blank, **lines,
            compression=None if compression == "none" else compression,
            blocksize=None if compression != "none" else (blocksize or "64MB"))


def _url_source(url: str, sep: str, blocksize: Any) -> tuple[Any, list[str], str, str]:
    """A URL (s3://, gs://, https:// ..., through fsspec): Parquet if it ends in .parquet /
    .pq or names a directory of them, else CSV (compression from the extension).  The header
    is read on the client; the data by the workers."""
    import io

    import dask.dataframe as dd
    import fsspec

    from oracledp.tabular._csv import _PARSE, _parse_error

    label = url
    stem = url.rstrip("/")
    if stem.endswith((".parquet", ".pq")) or url.endswith("/"):
        try:
            ddf = dd.read_parquet(url, dtype_backend="pyarrow")
        except Exception as exc:
            raise TableInputError(f"{label}: not a readable Parquet file or directory "
                                  f"({type(exc).__name__})") from None
        return ddf, [str(c) for c in ddf.columns], label, "parquet"
    compression = "gzip" if stem.endswith(".gz") else "zstd" if stem.endswith(".zst") else "none"
    try:
        with fsspec.open(url, "rt", encoding="utf-8",
                         compression=None if compression == "none" else compression) as fh:
            line = next((ln for ln in fh if ln.strip()), None)
    except UnicodeDecodeError:
        raise TableInputError(f"{label}: the file is not UTF-8 text; re-save it as UTF-8 "
                              "(e.g. from a spreadsheet: CSV UTF-8)") from None
    except Exception as exc:
        raise TableInputError(f"{label}: cannot read the file ({type(exc).__name__})") from None
    if line is None:
        raise TableInputError(f"{label}: the file is empty (expected a header line and rows)")
    try:
        head = pd.read_csv(io.StringIO(line.removeprefix("\ufeff")), sep=sep, header=None,
                           nrows=1, **_PARSE)
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise _parse_error(label, sep, exc) from None
    header = [str(v) for v in head.iloc[0]] if len(head) else []
    return _read_csv([url], sep, f"csv:{compression}", header, blocksize, label), header, \
        label, f"csv:{compression}"


def scan_table_dask(data: Any, schema: TableSchema, *, sep: str = ",",
                    ignore_extra: bool = True, scheduler: Any = None,
                    with_target: bool = True, codes: bool = True,
                    blocksize: int | str | None = None) -> Scan:
    """The default engine's :func:`~oracledp.tabular._engine.scan_table` on a Dask cluster
    (module docstring): the same :class:`~oracledp.tabular._engine.Scan`, bit for bit.

    ``scheduler``: None starts a local cluster for this pass (closed after); an address
    (``"tcp://host:8786"``) uses the running cluster there; a ``distributed.Client`` is used
    as it is.  ``blocksize``: the bytes of a plain CSV per partition (Dask's default, 64 MB,
    if None).  ``data`` as for ``scan_table``, or a Dask DataFrame; paths and URLs are read
    by the workers.
    """
    _require()
    with_target = with_target and schema.has_target  # a schema without one: synthesis
    if isinstance(data, bytes):  # a CSV's bytes: a private temporary file (local clusters)
        from oracledp.tabular._sources import bytes_as_file

        with bytes_as_file(data) as path:
            return scan_table_dask(path, schema, sep=sep, ignore_extra=ignore_extra,
                                   scheduler=scheduler, with_target=with_target, codes=codes,
                                   blocksize=blocksize)
    import dask.dataframe as dd

    if isinstance(data, (pd.DataFrame, dd.DataFrame)):
        return _scan_frames(data, schema, scheduler, with_target, ignore_extra, codes)
    from oracledp.tabular._engine import header_checks

    ddf, header, label, kind = _source(data, sep, blocksize)
    found, where = header_checks(schema, header, kind, label, sep, with_target, ignore_extra,
                                 codes)
    import dask

    task = dask.delayed(_partial_counts, pure=True)
    parts = [task(p, schema, where, with_target) for p in ddf.to_delayed()]
    with _client(scheduler) as client:
        try:
            partials = _compute(client, parts)
        except Exception as exc:
            err = _reading_error(exc, label, kind, sep)
            if err is None:
                raise
            raise err from None
    empty = ("the file has a header but no rows" if kind.startswith("csv")
             else "the table has no rows")
    return _merge(partials, schema, where, with_target, codes, found, label, empty)


def _merge(partials: list[Any], schema: TableSchema, where: dict[str, int], with_target: bool,
           codes: bool, found: dict[tuple[int, int], str], label: str, empty: str) -> Scan:
    """The partial counts grouped again on their keys (counts summed, flags or-ed) into the
    default engine's ``oracledp_groups``, then the default engine's finish."""
    import pyarrow as pa

    from oracledp.tabular._engine import _finish
    from oracledp.tabular._sources import connect

    con = connect()
    try:
        nonempty = [p for p in partials if p.num_rows]
        table = pa.concat_tables(nonempty or partials[:1], promote_options="permissive")
        rel = con.from_arrow(table)
        rel.create_view("oracledp_parts")
        names = list(table.column_names)
        keys = [c for c in names if c[0] in "kt" or c == "ty"]
        flags = [f"bool_or({c}) AS {c}" for c in names if c.startswith("f")]
        group = f" GROUP BY {', '.join(keys)}" if keys else ""
        con.execute("CREATE OR REPLACE TEMP TABLE oracledp_groups AS SELECT "
                    f"{', '.join([*keys, *flags, 'sum(n)::BIGINT AS n'])} FROM oracledp_parts"
                    + group)
        return _finish(con, schema, where, with_target, codes, found, label, empty)
    finally:
        con.close()


def _scan_frames(df: Any, schema: TableSchema, scheduler: Any, with_target: bool,
                 ignore_extra: bool, codes: bool) -> Scan:
    """A pandas or Dask DataFrame: each partition scanned by the schema's own code on the
    workers, the partial counts merged on the client (a table's problems are the union of
    its parts': every rule reads one cell at a time)."""
    import dask
    import dask.dataframe as dd

    from oracledp.tabular._engine import Scan, merge_rows

    if isinstance(df, pd.DataFrame):
        if len(df) == 0:
            raise TableInputError("the input: the table has a header but no rows")
        df = dd.from_pandas(df, npartitions=max(1, min(len(df) // 100_000 + 1, 64)),
                            sort=False)
    task = dask.delayed(_frame_counts, pure=True)
    parts = [task(p, schema, with_target, ignore_extra, codes) for p in df.to_delayed()]
    with _client(scheduler) as client:
        partials = _compute(client, parts)
    found: dict[tuple[int, int], str] = {}
    clipped: set[str] = set()
    rows, counts = [], []
    if sum(p[0] for p in partials) == 0:
        raise TableInputError("the input: the table has a header but no rows")
    for _, f, c, r, n in partials:
        found.update(f)
        clipped |= c
        if r is not None:
            rows.append(r)
            counts.append(n)
    if found or not codes:
        return Scan(found, clipped, None, None)
    merged_rows, merged_counts = merge_rows(np.concatenate(rows), np.concatenate(counts))
    return Scan(found, clipped, merged_rows, merged_counts)
