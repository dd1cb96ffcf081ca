"""Aggregated reading: a labelled table reduced to its distinct encoded rows and label counts.

:func:`read_aggregated` reads, checks and counts any table (CSV, Parquet, a DataFrame) in one
pass of the data engine (:mod:`oracledp.tabular._engine`, DuckDB; or a Dask cluster), so
memory grows with the distinct rows, not with the records.  The resulting
:class:`AggregatedTable` is fitted through the estimators' public API:
``est.fit(*table.weighted_rows())`` passes the distinct rows with their record counts as
``sample_weight`` (OPDisc, RSPM and Gaussian RSPM fit the same exact problem as on the whole
table, DP-SGD the same run as on the table that lists each row once per record), which is
what :func:`fit_aggregated` does for DP-SGD.  The exact classifiers (OPDisc, RSPM, Gaussian
RSPM) fit the same exact problem from ``table.counted_rows()`` instead: the distinct rows
decoded from their codes a block at a time, never the float matrix of the weighted rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from oracledp._validation import check_sep
from oracledp.oracles._row_blocks import CountedRows, RowBlocks
from oracledp.tabular._cells import warn_clipped
from oracledp.tabular._csv import Progress, _reporter, _source_label
from oracledp.tabular._schema import TableSchema

# --- aggregated reading: memory grows with the distinct rows, not with the records ----------


@dataclass(frozen=True, eq=False)
class AggregatedTable:
    """A labelled table reduced to its distinct encoded rows (see :func:`read_aggregated`).

    ``codes`` (g, number of schema columns; int32 from the data engine): the cell codes of each
    distinct row (level index, grid index ``k`` or number of bin cut points below the value),
    which
    :meth:`features` encodes exactly as :meth:`TableSchema.encode` encodes the records;
    ``counts`` (g, 2): how many records with that row carry ``schema.labels[0]`` and
    ``schema.labels[1]`` ((g, 1), the records with that row, for a schema without a target).  No record order, no value off the schema's public grids.
    """

    schema: TableSchema
    codes: NDArray[np.integer]
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
        are the true multiplicities of the records.  DP-SGD (its Poisson batches drawn over
        the records) releases exactly what it releases on ``np.repeat(X, sample_weight,
        axis=0)``: the records in this order, not the file's; the same mechanism, but for a
        given seed not the numbers of a fit on the records in file order.  ``y`` holds the schema's labels (as
        :meth:`TableSchema.labels_of` gives them); X has at most ``2 * n_groups`` rows.
        """
        self.schema.require_target("a classifier")
        group, label = np.nonzero(self.counts > 0)
        X = self.schema._decode(self.codes[group])  # rows repeated as codes: no float copy
        y = np.asarray(self.schema.labels, dtype=object)[label]
        return X, y, self.counts[group, label]

    def counted_rows(self) -> CountedRows:
        """The distinct encoded rows with their counts per label, decoded from the codes a
        block of rows at a time (:class:`~oracledp.oracles._row_blocks.CountedRows`): an exact
        classifier's ``fit(table.counted_rows(), None)`` fits exactly what
        ``fit(*table.weighted_rows())`` fits (the same problem, the same release), without
        the float matrix of the weighted rows (at 100 M records and 11 M distinct rows of 28
        features: 3.4 GB)."""
        codes, schema = self.codes, self.schema
        schema.require_target("a classifier")
        rows = RowBlocks(self.n_groups, schema.n_features, lambda idx: schema._decode(codes[idx]))
        labels = tuple(np.asarray(self.schema.labels, dtype=object).tolist())
        return CountedRows(rows, labels, self.counts)


def read_aggregated(data: Any, schema: TableSchema, *, sep: str = ",",
                    ignore_extra: bool = True, verbose: bool | Progress = False,
                    engine: str = "duckdb", scheduler: str | None = None) -> AggregatedTable:
    """Read, check and encode a labelled table in one pass, keeping only its distinct encoded
    rows with their label counts.

    ``data``: the path of a CSV file (plain, gzip or zstd), of a Parquet file, of a directory
    of Parquet files or a glob of them; or a pandas or Polars DataFrame or an Arrow table.
    The refusals are those of ``read_csv(source, schema, with_target=True)`` followed by
    encoding: a source that cannot be read raises :class:`TableInputError`, and every
    violation of the schema anywhere in the table is listed in ONE BoundsViolation, by column
    and rule (never a value or a row), after the whole table was checked and before anything
    random can happen.  The numbers of a column declared ``"out_of_bounds": "clip"`` are
    clipped to its bounds, as :meth:`TableSchema.encode` does, with one ClippedValuesWarning
    for the whole table.  Memory: the engine's (:data:`~oracledp.tabular._sources.MEMORY_LIMIT`,
    spilling to disk beyond) plus the distinct rows.  ``verbose`` reports progress as in
    :func:`read_csv`.

    ``engine="dask"`` runs the same pass on a Dask cluster (``scheduler``: the address of a
    running one; None starts a local cluster): the same table, bit for bit
    (:mod:`oracledp.tabular._dask`).
    """
    from oracledp.tabular._engine import ENGINES, scan_table

    if not isinstance(schema, TableSchema):
        raise TypeError(f"schema must be a TableSchema, got {type(schema).__name__}")
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {', '.join(map(repr, ENGINES))}, got {engine!r}")
    check_sep(sep)
    report = _reporter(verbose, _source_label(data if isinstance(data, (str, Path)) else b""))
    if engine == "dask":
        from oracledp.tabular._dask import scan_table_dask

        scan = scan_table_dask(data, schema, sep=sep, ignore_extra=ignore_extra,
                               scheduler=scheduler)
    else:
        scan = scan_table(data, schema, sep=sep, ignore_extra=ignore_extra, report=report)
    scan.raise_problems()
    warn_clipped(scan.clipped)
    assert scan.codes is not None and scan.counts is not None
    return AggregatedTable(schema=schema, codes=scan.codes, counts=scan.counts)


def fit_aggregated(estimator: Any, table: AggregatedTable) -> Any:
    """Fit an OPDisc, RSPM, Gaussian RSPM or DP-SGD classifier on an :class:`AggregatedTable`;
    returns the estimator.

    ``estimator.fit(X, y, sample_weight=counts)`` with ``X, y, counts =
    table.weighted_rows()``: the same checks, the same exact problem and the same release
    for the same ``random_state`` as ``estimator.fit`` on the whole encoded table (delta =
    1/n^2 with n the number of records), in memory that grows with the distinct rows.  For
    DP-SGD, whose draws follow the record order, the whole table means its records listed
    as ``weighted_rows`` lists them (:meth:`AggregatedTable.weighted_rows`).
    The guarantee's notes name the columns the schema clips
    (:meth:`TableSchema.annotate_guarantee`).
    """
    from sklearn.utils.validation import has_fit_parameter  # (not on the data path: 100 MB)

    if not has_fit_parameter(estimator, "sample_weight"):
        raise TypeError("fit_aggregated fits an estimator whose fit takes record counts as "
                        "sample_weight (OPDiscClassifier, RSPMClassifier, GaussianRSPMClassifier "
                        "or DPSGDLogisticRegression), got "
                        f"{type(estimator).__name__}")
    if not isinstance(table, AggregatedTable):
        raise TypeError(f"table must be an AggregatedTable, got {type(table).__name__}")
    from oracledp.estimators._exact import ExactHalfspaceClassifier

    if isinstance(estimator, ExactHalfspaceClassifier):  # the same fit, no float matrix
        estimator.fit(table.counted_rows(), None)
    else:
        X, y, counts = table.weighted_rows()
        estimator.fit(X, y, sample_weight=counts)
    estimator.guarantee_ = table.schema.annotate_guarantee(estimator.guarantee_)
    return estimator
