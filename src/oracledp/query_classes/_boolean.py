"""Boolean query classes over {0,1}^d (spec ``docs/specs/oracle-query.md`` section 2 table).

Parameter encoding: one 0/1 indicator row ``s`` of the selected set T per
hypothesis (length ``point_dim``).

=========================  ============================  ===============  ==============
class                      query                         separator U (m)  dual separator
=========================  ============================  ===============  ==============
MonotoneConjunctions       AND_{j in T} z_j (T=∅: 1)     {1 - e_j}  (d)   dictators x_j
MonotoneDisjunctions       OR_{j in T} z_j  (T=∅: 0)     {e_j}      (d)   dictators x_j
Parities                   XOR_{j in T} z_j (T=∅: 0)     {e_j}      (d)   dictators x_j
ConjunctionsOfLiterals     AND over z = (x, 1 - x)       {1 - e_l}  (2d)  dictators x_j
=========================  ============================  ===============  ==============

Why U separates (spec section 2): ``q_T(1 - e_j) = 1`` iff ``j not in T`` for
conjunctions; ``q_T(e_j) = 1`` iff ``j in T`` for disjunctions and parities, so
T is read off the pattern.  Conjunctions of literals are monotone conjunctions
over the encoding ``z = (x, 1 - x)``; their separator points ``1 - e_l`` are not
valid encodings of records (spec section 2(c): any separator inside the record
encoding would need about 2^d points).  Every class contains the dictators
``x_j``, which separate records (dual separator, spec section 2(b)).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from oracledp.query_classes._base import _FeatureClass

__all__ = ["ConjunctionsOfLiterals", "MonotoneConjunctions", "MonotoneDisjunctions", "Parities"]


def _all_subsets(p: int) -> NDArray[np.int64]:
    idx = np.arange(1 << p, dtype=np.int64)
    return ((idx[:, None] >> np.arange(p)[None, :]) & 1).astype(np.int64)


@dataclass(frozen=True)
class _SubsetClass(_FeatureClass):
    @property
    def param_dim(self) -> int:
        return self.point_dim

    @property
    def size(self) -> int:
        return 1 << self.point_dim

    def _enumerate(self) -> NDArray[np.int64]:
        return _all_subsets(self.point_dim)

    def check_params(self, params: ArrayLike) -> NDArray[np.int64]:
        return self._binary_params(params, self.param_dim)

    def dual_separator(self) -> NDArray[np.int64]:
        """Dictators ``g_j(x) = x_j`` = the singleton sets {j}, j < d (m2 = d)."""
        return np.eye(self.d, self.param_dim, dtype=np.int64)


@dataclass(frozen=True)
class MonotoneConjunctions(_SubsetClass):
    """``q_T(z) = AND_{j in T} z_j``; separator ``{1 - e_j}`` (m = d)."""

    name = "monotone-conjunctions"

    def _evaluate(self, params: NDArray[np.int64], Z: NDArray[np.float64]) -> NDArray[np.uint8]:
        misses = params @ (1 - Z.astype(np.int64)).T  # selected coordinates that are 0
        return (misses == 0).astype(np.uint8)

    def separator(self) -> NDArray[np.float64]:
        return 1.0 - np.eye(self.point_dim)


@dataclass(frozen=True)
class MonotoneDisjunctions(_SubsetClass):
    """``q_T(z) = OR_{j in T} z_j``; separator ``{e_j}`` (m = d); self-dual."""

    name = "monotone-disjunctions"

    def _evaluate(self, params: NDArray[np.int64], Z: NDArray[np.float64]) -> NDArray[np.uint8]:
        return (params @ Z.astype(np.int64).T > 0).astype(np.uint8)

    def separator(self) -> NDArray[np.float64]:
        return np.eye(self.point_dim)


@dataclass(frozen=True)
class Parities(_SubsetClass):
    """``q_T(z) = sum_{j in T} z_j mod 2``; separator ``{e_j}`` (m = d); self-dual."""

    name = "parities"

    def _evaluate(self, params: NDArray[np.int64], Z: NDArray[np.float64]) -> NDArray[np.uint8]:
        return ((params @ Z.astype(np.int64).T) % 2).astype(np.uint8)

    def separator(self) -> NDArray[np.float64]:
        return np.eye(self.point_dim)


@dataclass(frozen=True)
class ConjunctionsOfLiterals(MonotoneConjunctions):
    """Conjunctions of literals (contingency-table queries) as monotone conjunctions of z = (x, 1 - x).

    Parameters: ``s in {0,1}^{2d}``; ``s_j = 1`` selects literal ``x_j``,
    ``s_{d+j} = 1`` selects ``not x_j``.  Points live in {0,1}^{2d}; records are
    mapped by :meth:`encode`.  Separator ``{1 - e_l : l < 2d}`` (m = 2d, not valid
    encodings).  Rows selecting both ``x_j`` and ``not x_j`` are the constant 0 on
    records but distinct on the separator, so the pattern map is injective on
    parameters (what RSPM's proof needs).  No bound k on the number of literals.
    """

    name = "conjunctions-of-literals"

    @property
    def point_dim(self) -> int:
        return 2 * self.n_features

    def encode(self, X: ArrayLike) -> NDArray[np.float64]:
        Xb = super().encode(X)
        return np.hstack([Xb, 1.0 - Xb])

    def check_points(self, Z: ArrayLike, name: str = "points") -> NDArray[np.float64]:
        arr = np.asarray(Z, dtype=np.float64)
        if arr.ndim == 2 and arr.shape[1] == self.d and self.d != self.point_dim:
            raise ValueError(
                f"{name} has {self.d} columns: records must be encoded as z = (x, 1 - x) with "
                f"{self.name}.encode(X) first"
            )
        return super().check_points(arr, name)
