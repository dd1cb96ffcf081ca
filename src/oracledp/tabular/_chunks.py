"""A table read and encoded in chunks of rows, in bounded memory: what ``oracledp predict``
streams (issue 39).

:func:`read_chunks` gives the table that ``read_csv(source, schema, check=False)`` returns
as consecutive DataFrames (a plain or gzip CSV through pandas' own parser with the same
options, chunk by chunk; Parquet, a directory or glob, a zstd CSV, an Arrow or Polars table
through the data engine, :func:`oracledp.tabular._sources.read_frames`), with the same
file-level refusals.  :class:`ChunkedEncoder` checks the chunks one at a time and gives,
after the last, exactly what :meth:`TableSchema.encode` (``strict``) or
:meth:`TableSchema.encode_for_prediction` of the whole table gives: the same problems (one
BoundsViolation), the same clipped columns, the same adjusted-row counts; then the codes of
any chunk, to score it.  A caller that reads the table twice (check every chunk, then encode
and write each) writes nothing for a table that is refused.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from oracledp._errors import TableInputError
from oracledp.tabular._cells import _Cells, _table_violation, warn_clipped
from oracledp.tabular._csv import (
    _PARSE,
    Progress,
    _blank_rows,
    _check_header,
    _check_unique,
    _every_row_closed,
    _extra_fields,
    _fewer_fields_in,
    _header,
    _named,
    _no_rows,
    _parse_error,
    _prescan,
    _reporter,
    _source_label,
    _text_stream,
    check_widths,
)
from oracledp.tabular._schema import TableSchema

#: Rows per chunk: about 20 MB of cells for a 12-column table, whatever the table's size.
CHUNK_ROWS = 65_536

_RULES = ("missing", "unknown level", "clipped")  # the order encode_for_prediction counts them


def read_chunks(source: str | Path, schema: TableSchema | None, *, sep: str = ",",
                with_target: bool = False, rows: int | None = None,
                verbose: bool | Progress = False) -> Iterator[pd.DataFrame]:
    """The table of ``read_csv(source, schema, sep=sep, with_target=with_target,
    check=False)`` in consecutive chunks of at most ``rows`` rows (default
    :data:`CHUNK_ROWS`; through the engine, whole DuckDB vectors of 2,048 rows),
    the same cells and column names.  Its refusals (TableInputError) are raised in
    ``read_csv``'s order of precedence (a parse error anywhere, then the header, then a table
    without rows), so some may come after chunks were given: read the whole table once
    before acting on it."""
    from oracledp.tabular._sources import engine_reads, read_frames

    rows = CHUNK_ROWS if rows is None else rows
    if engine_reads(source):
        label = _source_label(source)
        deferred: TableInputError | None = None
        for frame in read_frames(source, sep, vectors=max(1, rows // 2048)):
            if deferred is None:
                try:
                    _check_unique(list(frame.columns), label)
                except TableInputError as exc:  # raised after the pass, as read_frame
                    deferred = exc              # reads the whole table before the check
            if deferred is None:
                yield frame
        if deferred is not None:
            raise deferred
        return
    label = _source_label(source)
    report = _reporter(verbose, label)
    spaced, lines = _prescan(source, label, report, sep)
    header = _header(source, sep, label)
    deferred = None
    names: list[str] | None = None
    n = 0
    closed = functools.cache(lambda: _every_row_closed(source, label, sep))
    fewer = functools.cache(lambda width: _fewer_fields_in(source, label, sep, width))
    with _text_stream(source, label, report) as fh:
        try:
            for chunk in pd.read_csv(fh, sep=sep, chunksize=rows, **_PARSE, **lines,
                                     **_blank_rows(source, sep, label)):
                chunk = _extra_fields(chunk, label, sep, closed)
                check_widths(chunk, spaced, fewer, label)
                if names is None:
                    names = _named(list(chunk.columns), header)
                    try:
                        _check_unique(names, label)
                        _check_header(names, schema, with_target, sep, label)
                    except TableInputError as exc:  # after the parse, as read_csv
                        deferred = exc
                if deferred is None and len(chunk):
                    chunk.columns = names
                    n += len(chunk)
                    yield chunk.reset_index(drop=True)
        except (pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
            raise _parse_error(label, sep, exc) from None
    if deferred is not None:
        raise deferred
    if n == 0:
        raise _no_rows(label)


class ChunkedEncoder:
    """The prediction encoding of a table checked one chunk at a time (see the module
    docstring): :meth:`add` each chunk, then :meth:`finish`, then :meth:`codes` of each
    chunk.  ``strict``: :meth:`TableSchema.encode`'s rules; else the prediction policy of
    :meth:`TableSchema.encode_for_prediction`."""

    def __init__(self, schema: TableSchema, strict: bool) -> None:
        self.schema, self.strict = schema, strict
        self.n_rows = 0
        self._found: dict[tuple[int, int], str] = {}
        self._clipped: set[str] = set()
        self._counts: dict[tuple[str, str], int] = {}
        # per categorical column (lenient): unknown levels, cells read as values, the refusal
        self._unknown: dict[int, list[int]] = {}
        self._most: dict[int, str] = {}

    def add(self, chunk: pd.DataFrame) -> None:
        """Check one chunk: its problems, clipped columns and adjusted rows are kept."""
        self.n_rows += len(chunk)
        adjusted: dict[str, dict[str, int]] | None = None if self.strict else {}
        found, _, _ = self.schema._scan(chunk, with_target=False, adjusted=adjusted,
                                        clipped=self._clipped)
        for rank, msg in found:
            if not self.strict and self._categorical(rank):
                self._most[rank[0]] = msg  # "most values are not declared levels": decided
                continue                   # on the whole table's counts, in finish
            self._found.setdefault(rank, msg)
        if adjusted is None:
            return
        for name, rules in adjusted.items():
            for rule, k in rules.items():
                if rule != "unknown level":  # counted below, also where the chunk refused
                    self._counts[(name, rule)] = self._counts.get((name, rule), 0) + k
        names = set(map(str, chunk.columns))
        for i, c in enumerate(self.schema.columns):
            if c.kind == "categorical" and c.name in names and list(chunk.columns).count(
                    c.name) == 1:
                unknown, ok = self._unknown_levels(i, chunk[c.name])
                tally = self._unknown.setdefault(i, [0, 0])
                tally[0] += unknown
                tally[1] += ok

    def _categorical(self, rank: tuple[int, int]) -> bool:
        i, rule = rank
        return (rule == 1 and 0 <= i < len(self.schema.columns)
                and self.schema.columns[i].kind == "categorical")

    def _unknown_levels(self, i: int, s: pd.Series) -> tuple[int, int]:
        """How many cells of column ``i`` are values (neither missing nor spaced) and how
        many of those are not declared levels: the counts the prediction policy's majority
        rule reads (as :meth:`TableSchema._scan_cells` computes them)."""
        c = self.schema.columns[i]
        cells = _Cells(s)
        _, _, ok = self.schema._value_cells(c, cells)
        unknown = ok & (cells.level_codes(c.levels or ()) < 0)
        return int(unknown.sum()), int(ok.sum())

    def finish(self) -> dict[str, dict[str, int]]:
        """After the last chunk: raise the whole table's one BoundsViolation if it has
        problems; else issue its ClippedValuesWarning (if any) and return the rows the
        prediction policy adjusted, by column and rule, as ``encode_for_prediction``."""
        found = dict(self._found)
        unknown: dict[str, int] = {}
        for i, (u, ok) in self._unknown.items():
            if u and 2 * u > ok:  # most values unknown: some chunk's refusal says so
                found[(i, 1)] = self._most[i]
            elif u:
                unknown[self.schema.columns[i].name] = u
        if found:
            raise _table_violation([found[k] for k in sorted(found)])
        warn_clipped(self._clipped)
        adjusted: dict[str, dict[str, int]] = {}
        for c in self.schema.columns:
            counts = {**{r: k for (name, r), k in self._counts.items() if name == c.name},
                      **({"unknown level": unknown[c.name]} if c.name in unknown else {})}
            for rule in _RULES:
                if counts.get(rule):
                    adjusted.setdefault(c.name, {})[rule] = counts[rule]
        return adjusted

    def codes(self, chunk: pd.DataFrame) -> NDArray[np.int64]:
        """The cell codes of a chunk of a table that :meth:`finish` accepted (one column per
        schema column, as the whole table's encoding codes them; see
        :meth:`TableSchema._decode`)."""
        out = np.empty((len(chunk), len(self.schema.columns)), dtype=np.int64)
        for i, c in enumerate(self.schema.columns):
            _, out[:, i] = self.schema._scan_cells(
                i, chunk[c.name], adjusted=None if self.strict else {}, clipped=set())
        return out

    def encode(self, chunk: pd.DataFrame) -> NDArray[np.float64]:
        """The encoded rows of a chunk (after :meth:`finish`)."""
        return self.schema._decode(self.codes(chunk))
