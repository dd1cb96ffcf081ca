"""The container every tabular loader returns."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from oracledp.oracles._halfspace import FeatureSchema

__all__ = ["TabularDataset"]


@dataclass(frozen=True, eq=False)
class TabularDataset:
    """An encoded, bounded classification dataset.

    Attributes
    ----------
    X:
        ``float64`` array of shape ``(n, d)``, read-only.
    y:
        Classification: ``int8`` labels in ``{-1, +1}``; regression (e.g. the
        KDD-99 ridge task): ``float64`` targets with ``|y| <= 1``.  Read-only.
    feature_names:
        One name per column of ``X``: the attribute for a numeric column
        (``"age"``), ``"attribute=level"`` for a one-hot column
        (``"marital-status=Never-married"``).
    numeric_columns:
        Indices of the numeric (scaled) columns.
    categorical_blocks:
        For each categorical attribute, the indices of its one-hot columns;
        exactly one of them is 1 in every row.
    bounds:
        Declared, *public* bounds that hold for every possible record, not just
        the ones in the file; privacy proofs may rely on them.  Loaders refuse
        (with :class:`~oracledp._errors.BoundsViolation`) any record outside them
        rather than clipping.
    name, description:
        Short identifier and a one-paragraph description of the encoding.
    source_rows:
        0-based indices, in the source file, of the records in ``X`` (in the
        same order), so a subsample can be traced back and reproduced.
    feature_schema:
        The public :class:`~oracledp.oracles.FeatureSchema` of ``X`` (0/1
        columns, public grids and bounds of the others) when the encoding is
        exact, for the exact-oracle classifiers; ``None`` otherwise.
    """

    X: NDArray[np.float64]
    y: NDArray[np.int8] | NDArray[np.float64]
    feature_names: list[str]
    numeric_columns: list[int]
    categorical_blocks: dict[str, list[int]]
    bounds: dict[str, object]
    name: str
    description: str
    source_rows: NDArray[np.int64] | None = field(default=None)
    feature_schema: FeatureSchema | None = field(default=None)

    def __post_init__(self) -> None:
        n, d = self.X.shape
        if self.y.shape != (n,):
            raise ValueError(f"y has shape {self.y.shape}, expected ({n},)")
        if len(self.feature_names) != d:
            raise ValueError(f"{len(self.feature_names)} feature names for {d} columns")
        if self.source_rows is not None and self.source_rows.shape != (n,):
            raise ValueError(f"source_rows has shape {self.source_rows.shape}, expected ({n},)")

    @property
    def n_samples(self) -> int:
        return int(self.X.shape[0])

    @property
    def n_features(self) -> int:
        return int(self.X.shape[1])

    def __repr__(self) -> str:
        return (
            f"TabularDataset(name={self.name!r}, n_samples={self.n_samples}, "
            f"n_features={self.n_features})"
        )
