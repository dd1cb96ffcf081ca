"""A float feature matrix given block by block, never held whole: the input of an exact fit
on many distinct rows (issue 39).

:class:`RowBlocks` stands for an ``(n, d)`` float64 matrix whose rows ``a:b`` are computed
on demand (``rows[a:b]``), e.g. the distinct rows of an aggregated table decoded from their
integer cell codes.  :meth:`HalfspaceProblem.from_counts
<oracledp.oracles.HalfspaceProblem.from_counts>` reads it block by block into the exact
problem's small integers, so the float matrix never exists.  :class:`CountedRows` adds the
record counts of each row per label: what an exact estimator's ``fit`` takes instead of
``(X, y, sample_weight)``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["CountedRows", "RowBlocks"]

_Block = Callable[[NDArray[np.intp]], NDArray[np.float64]]


class RowBlocks:
    """``n`` rows of ``d`` float64 features, ``rows(index)`` computing the rows ``index`` (an
    integer array, increasing).  Only slices with step 1 are read (``blocks[a:b]``: a new
    float64 array); :meth:`take` keeps some rows, :meth:`map` applies a row-wise function to
    every block (the rows it is given, the same rows it returns)."""

    ndim = 2
    dtype = np.dtype(np.float64)

    def __init__(self, n: int, d: int, rows: _Block, index: NDArray[np.intp] | None = None,
                 maps: Sequence[Callable[[NDArray[np.float64]], NDArray[np.float64]]] = ()):
        self._n, self._d, self._rows = int(n), int(d), rows
        self._index = index
        self._maps = tuple(maps)

    @property
    def shape(self) -> tuple[int, int]:
        return (self._n if self._index is None else len(self._index), self._d)

    def __len__(self) -> int:
        return self.shape[0]

    def __getitem__(self, key: slice) -> NDArray[np.float64]:
        if not isinstance(key, slice) or key.step not in (None, 1):
            raise TypeError("RowBlocks reads slices of rows only (rows[a:b])")
        a, b, _ = key.indices(self.shape[0])
        idx = (np.arange(a, max(a, b), dtype=np.intp) if self._index is None
               else self._index[a:b])
        out = np.asarray(self._rows(idx), dtype=np.float64)
        for fn in self._maps:
            out = fn(out)
        return out

    def take(self, keep: NDArray[np.bool_]) -> RowBlocks:
        """The rows where ``keep`` is True, in order."""
        base = np.arange(self._n, dtype=np.intp) if self._index is None else self._index
        return RowBlocks(self._n, self._d, self._rows, base[np.asarray(keep, dtype=bool)],
                         self._maps)

    def map(self, fn: Callable[[NDArray[np.float64]], NDArray[np.float64]]) -> RowBlocks:
        """The same rows, each block passed through ``fn`` (a row-wise function)."""
        return RowBlocks(self._n, self._d, self._rows, self._index, (*self._maps, fn))

    def __array__(self, dtype: Any = None, copy: Any = None) -> NDArray[np.float64]:
        """The whole matrix (only where a caller needs it at once, e.g. a refusal that lists
        every column)."""
        out = self[0:self.shape[0]]
        return out if dtype is None else out.astype(dtype)


@dataclass(frozen=True, eq=False)
class CountedRows:
    """Feature rows with their record counts per label: row ``i`` stands for
    ``counts[i, j]`` records labelled ``labels[j]``.

    ``exact_estimator.fit(CountedRows(...), None)`` fits exactly what
    ``exact_estimator.fit(X, y, sample_weight=c)`` fits when ``(X, y, c)`` lists each row once
    per label it carries (in any order), with that count: the same exact problem, the same
    release for the same ``random_state``; without the float matrix X ever being built.
    """

    rows: RowBlocks
    labels: tuple[Any, ...]
    counts: NDArray[np.int64]

    def __post_init__(self) -> None:
        if not isinstance(self.rows, RowBlocks):
            raise TypeError(f"rows must be RowBlocks, got {type(self.rows).__name__}")
        counts = np.asarray(self.counts)
        if (counts.ndim != 2 or counts.shape != (self.rows.shape[0], len(self.labels))
                or not np.issubdtype(counts.dtype, np.integer)):
            raise ValueError("counts must be an integer array with one row per row and one "
                             "column per label")
        if (counts < 0).any():
            raise ValueError("counts must be >= 0 (counts of records)")

    @property
    def shape(self) -> tuple[int, int]:
        return self.rows.shape
