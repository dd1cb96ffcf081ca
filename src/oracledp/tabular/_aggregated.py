"""Aggregated reading: a labelled CSV reduced to its distinct encoded rows and label counts.

:func:`read_csv_aggregated` checks and encodes the file chunk by chunk (:data:`CHUNK_ROWS`
rows at a time), so memory grows with the distinct rows, not with the records.  The
resulting :class:`AggregatedTable` is fitted through the estimators' public API:
``est.fit(*table.weighted_rows())`` passes the distinct rows with their record counts as
``sample_weight`` (OPDisc and RSPM fit exactly as on the whole table), which is what
:func:`fit_aggregated` does.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray
from sklearn.utils.validation import has_fit_parameter

from oracledp._validation import check_sep
from oracledp.tabular._cells import _table_violation, warn_clipped
from oracledp.tabular._csv import (
    Progress,
    _check_header,
    _check_unique,
    _chunks,
    _reporter,
    _source_label,
)
from oracledp.tabular._schema import TableSchema

# --- aggregated reading: memory grows with the distinct rows, not with the records ----------


#: Rows per chunk of :func:`read_csv_aggregated` (a chunk of strings takes roughly
#: rows x columns x 60 bytes; the distinct rows found so far are kept besides).
CHUNK_ROWS = 100_000


@dataclass(frozen=True, eq=False)
class AggregatedTable:
    """A labelled table reduced to its distinct encoded rows (see :func:`read_csv_aggregated`).

    ``codes`` (g, number of schema columns): the cell codes of each distinct row (level
    index, grid index ``k`` or number of bin cut points below the value), which
    :meth:`features` encodes exactly as :meth:`TableSchema.encode` encodes the records;
    ``counts`` (g, 2): how many records with that row carry ``schema.labels[0]`` and
    ``schema.labels[1]``.  No record order, no value off the schema's public grids.
    """

    schema: TableSchema
    codes: NDArray[np.int64]
    counts: NDArray[np.int64]

    @property
    def n(self) -> int:
        """The number of records (public, as in every fit here: it sets delta = 1/n^2)."""
        return int(self.counts.sum())

    @property
    def n_groups(self) -> int:
        return int(self.codes.shape[0])

    def features(self) -> NDArray[np.float64]:
        """The distinct encoded rows, shape (g, ``schema.n_features``)."""
        return self.schema._decode(self.codes)

    def weighted_rows(self) -> tuple[NDArray[np.float64], NDArray[np.object_], NDArray[np.int64]]:
        """``(X, y, sample_weight)``: each distinct encoded row once per label it carries,
        with the number of records that have that row and label.

        ``est.fit(X, y, sample_weight=sample_weight)`` (OPDisc, RSPM) is then exactly
        ``est.fit(schema.encode(df), schema.labels_of(df))`` on the whole table: the counts
        are the true multiplicities of the records.  ``y`` holds the schema's labels (as
        :meth:`TableSchema.labels_of` gives them); X has at most ``2 * n_groups`` rows.
        """
        group, label = np.nonzero(self.counts > 0)
        X = self.schema._decode(self.codes[group])  # rows repeated as codes: no float copy
        y = np.asarray(self.schema.labels, dtype=object)[label]
        return X, y, self.counts[group, label]


class _RowCounter:
    """Label counts per distinct row of cell codes, merged chunk by chunk.

    A row of codes is packed into as few int64 words as keep each word's range below 2**62
    (one word for usual schemas), so rows are compared as integers.
    """

    def __init__(self, cards: list[int]) -> None:
        self.cards = cards
        self.words: list[list[int]] = [[]]
        prod = 1
        for j, k in enumerate(cards):
            if self.words[-1] and prod * k >= 2**62:
                self.words.append([])
                prod = 1
            self.words[-1].append(j)
            prod *= k
        self.keys = np.empty((0, len(self.words)), dtype=np.int64)
        self.counts = np.empty((0, 2), dtype=np.int64)
        self._pending: list[tuple[NDArray[np.int64], NDArray[np.int64]]] = []
        self._pending_rows = 0

    def _pack(self, codes: NDArray[np.int64]) -> NDArray[np.int64]:
        out = np.zeros((codes.shape[0], len(self.words)), dtype=np.int64)
        for w, cols in enumerate(self.words):
            for j in cols:
                out[:, w] *= self.cards[j]
                out[:, w] += codes[:, j]
        return out

    def _unpack(self, keys: NDArray[np.int64]) -> NDArray[np.int64]:
        out = np.empty((keys.shape[0], len(self.cards)), dtype=np.int64)
        for w, cols in enumerate(self.words):
            key = keys[:, w].copy()
            for j in reversed(cols):
                key, out[:, j] = np.divmod(key, self.cards[j])
        return out

    @staticmethod
    def _unique(keys: NDArray[np.int64]) -> tuple[NDArray[np.int64], NDArray[np.intp]]:
        if keys.shape[1] == 1:
            u, inv = np.unique(keys[:, 0], return_inverse=True)
            return u[:, None], inv.ravel()
        u, inv = np.unique(keys, axis=0, return_inverse=True)
        return u, inv.ravel()

    def add(self, codes: NDArray[np.int64], labels: NDArray[np.int8]) -> None:
        keys, inv = self._unique(self._pack(codes))
        counts = np.bincount(inv * 2 + labels, minlength=2 * len(keys)).reshape(-1, 2)
        self._pending.append((keys, counts.astype(np.int64)))
        self._pending_rows += len(keys)
        if self._pending_rows > max(len(self.keys), 1 << 20):
            self._merge()

    def _merge(self) -> None:
        if not self._pending:
            return
        keys = np.concatenate([self.keys, *(k for k, _ in self._pending)])
        counts = np.concatenate([self.counts, *(c for _, c in self._pending)])
        self._pending, self._pending_rows = [], 0
        self.keys, inv = self._unique(keys)
        del keys
        self.counts = np.zeros((len(self.keys), 2), dtype=np.int64)
        np.add.at(self.counts, inv, counts)

    def result(self) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        self._merge()
        return self._unpack(self.keys), self.counts


def _cardinalities(schema: TableSchema) -> list[int]:
    """How many codes each column can take (public: from the schema alone)."""
    return [max(c.n_values + c.missing_level, 1) for c in schema.columns]


def read_csv_aggregated(source: str | Path | bytes, schema: TableSchema, *, sep: str = ",",
                        chunksize: int | None = None, ignore_extra: bool = True,
                        verbose: bool | Progress = False) -> AggregatedTable:
    """Read, check and encode a labelled CSV chunk by chunk, keeping only its distinct
    encoded rows with their label counts.

    The refusals are those of ``read_csv(source, schema, with_target=True)`` followed by
    encoding: file-level problems raise :class:`TableInputError`, and every violation of the
    schema anywhere in the file is listed in ONE BoundsViolation, by column and rule (never a
    value or a row), after the whole file was checked and before anything random can
    happen.  The numbers of a column declared ``"out_of_bounds": "clip"`` are clipped to its
    bounds, as :meth:`TableSchema.encode` does, with one ClippedValuesWarning for the whole
    file.  Memory holds one chunk of ``chunksize`` rows plus the distinct rows, whatever
    the number of records (``chunksize`` None: :data:`CHUNK_ROWS`).  ``verbose`` reports
    progress as in :func:`read_csv`.
    """
    if not isinstance(schema, TableSchema):
        raise TypeError(f"schema must be a TableSchema, got {type(schema).__name__}")
    if chunksize is None:
        chunksize = CHUNK_ROWS
    if isinstance(chunksize, bool) or not isinstance(chunksize, int) or chunksize < 1:
        raise ValueError(f"chunksize must be an integer >= 1, got {chunksize!r}")
    check_sep(sep)
    label = _source_label(source)
    report = _reporter(verbose, label)
    counter: _RowCounter | None = _RowCounter(_cardinalities(schema))
    found: dict[tuple[int, int], str] = {}
    clipped: set[str] = set()
    for i, chunk in enumerate(_chunks(source, sep, chunksize, label, report)):
        if i == 0:
            _check_unique(list(chunk.columns), label)
            _check_header(list(chunk.columns), schema, True, sep, label)
        items, codes, y_idx = schema._scan(chunk, with_target=True, codes=counter is not None,
                                           ignore_extra=ignore_extra, clipped=clipped)
        found.update(items)
        if found:
            counter = None  # nothing will be fitted: only the checks go on
        elif counter is not None and codes is not None and y_idx is not None:
            counter.add(codes, y_idx)
    if found or counter is None:
        raise _table_violation([found[k] for k in sorted(found)])
    warn_clipped(clipped)
    codes, counts = counter.result()
    return AggregatedTable(schema=schema, codes=codes, counts=counts)


def fit_aggregated(estimator: Any, table: AggregatedTable) -> Any:
    """Fit an OPDisc or RSPM classifier on an :class:`AggregatedTable`; returns the estimator.

    ``estimator.fit(X, y, sample_weight=counts)`` with ``X, y, counts =
    table.weighted_rows()``: the same checks, the same exact problem and the same release
    for the same ``random_state`` as ``estimator.fit`` on the whole encoded table (delta =
    1/n^2 with n the number of records), in memory that grows with the distinct rows.
    The guarantee's notes name the columns the schema clips
    (:meth:`TableSchema.annotate_guarantee`).
    """
    if not has_fit_parameter(estimator, "sample_weight"):
        raise TypeError("fit_aggregated fits an estimator whose fit takes record counts as "
                        "sample_weight (OPDiscClassifier or RSPMClassifier), got "
                        f"{type(estimator).__name__}")
    if not isinstance(table, AggregatedTable):
        raise TypeError(f"table must be an AggregatedTable, got {type(table).__name__}")
    X, y, counts = table.weighted_rows()
    estimator.fit(X, y, sample_weight=counts)
    estimator.guarantee_ = table.schema.annotate_guarantee(estimator.guarantee_)
    return estimator
