"""Integer-weight halfspaces ``q_w(x) = 1[<w, x> >= 1]``, ``w in {-B..B}^d`` (spec section 2 table).

Separator (m = 2Bd): ``{+e_j / v, -e_j / v : j < d, v = 1..B}``.  Since
``q_w(e_j / v) = 1[w_j >= v]`` and ``q_w(-e_j / v) = 1[w_j <= -v]``, the pattern
gives every ``w_j`` (spec section 2).  The points are not records.

Dual separator: ``g_j(x) = 1[x_j >= 1]``, the halfspace ``w = e_j``, which
separates records of either cube {0,1}^d or {-1,1}^d.

Exact evaluation: points must be rational with a per-point common denominator
``v <= max_denominator`` (integers, and ``±e_j/v``, qualify).  With ``a = v z``
integral, ``q_w(z) = 1[<w, a> >= v]``, computed in integer arithmetic; the MIP
oracle uses the same scaling, so ``<w, a> >= v`` versus ``<= v - 1`` is an exact
integer dichotomy.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from oracledp.query_classes._base import _check_dim, _FeatureClass, _integer_rows

__all__ = ["IntegerHalfspaces", "integer_scaling"]

_RATIONAL_TOL = 1e-9


def integer_scaling(Z: NDArray[np.float64], max_denominator: int) -> tuple[
        NDArray[np.int64], NDArray[np.int64]]:
    """Smallest ``v_r in 1..max_denominator`` with ``v_r Z[r]`` integral; returns (v_r Z[r], v_r).

    Raises ValueError if some row has no such denominator.
    """
    n = Z.shape[0]
    v = np.zeros(n, dtype=np.int64)
    todo = np.ones(n, dtype=bool)
    for den in range(1, max_denominator + 1):
        if not todo.any():
            break
        S = Z[todo] * den
        ok = np.all(np.abs(S - np.rint(S)) <= _RATIONAL_TOL * max(1.0, den), axis=1)
        idx = np.flatnonzero(todo)[ok]
        v[idx] = den
        todo[idx] = False
    if todo.any():  # no row index or value in the message: the points may be records
        raise ValueError(
            f"a point is not rational with denominator <= {max_denominator}; halfspace "
            "evaluation is exact only for such points (put the points on a public grid)"
        )
    A = np.rint(Z * v[:, None]).astype(np.int64)
    return A, v


@dataclass(frozen=True)
class IntegerHalfspaces(_FeatureClass):
    """``q_w(x) = 1[<w, x> >= 1]`` with integer ``w in {-B..B}^d``.

    Parameters: the integer vector ``w`` itself (one row per hypothesis).
    ``domain`` is the record cube, ``"01"`` ({0,1}^d) or ``"pm1"`` ({-1,1}^d).
    Points of the point space may be any rationals with a small denominator
    (see :func:`integer_scaling`); ``max_denominator`` defaults to ``max(B, 1)``.
    """

    B: int = 1
    domain: str = "01"
    max_denominator: int = 0

    name: ClassVar[str] = "integer-halfspaces"  # type: ignore[misc]
    binary_points: ClassVar[bool] = False  # type: ignore[misc]

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "B", _check_dim(self.B, "B"))
        if self.domain not in ("01", "pm1"):
            raise ValueError(f"domain must be '01' or 'pm1', got {self.domain!r}")
        md = self.max_denominator or self.B
        object.__setattr__(self, "max_denominator", _check_dim(max(md, self.B), "max_denominator"))

    @property
    def param_dim(self) -> int:
        return self.n_features

    @property
    def size(self) -> int:
        return int((2 * self.B + 1) ** self.n_features)

    def _enumerate(self) -> NDArray[np.int64]:
        vals = range(-self.B, self.B + 1)
        return np.array(list(itertools.product(vals, repeat=self.d)), dtype=np.int64).reshape(
            -1, self.d)

    def check_params(self, params: ArrayLike) -> NDArray[np.int64]:
        P = _integer_rows(params, self.d, "halfspace")
        if np.abs(P).max(initial=0) > self.B:
            raise ValueError(f"halfspace weights must lie in [-{self.B}, {self.B}]")
        return P

    def check_points(self, Z: ArrayLike, name: str = "points") -> NDArray[np.float64]:
        arr = super().check_points(Z, name)
        integer_scaling(arr, self.max_denominator)  # raises on non-rational points
        return arr

    def _evaluate(self, params: NDArray[np.int64], Z: NDArray[np.float64]) -> NDArray[np.uint8]:
        A, v = integer_scaling(Z, self.max_denominator)
        return (params @ A.T >= v[None, :]).astype(np.uint8)

    def separator(self) -> NDArray[np.float64]:
        d, B = self.d, self.B
        E = np.eye(d)
        inv = 1.0 / np.arange(1, B + 1)
        plus = (inv[:, None, None] * E[None, :, :]).reshape(B * d, d)
        return np.vstack([plus, -plus])

    def dual_separator(self) -> NDArray[np.int64]:
        """``g_j = 1[x_j >= 1]``: the halfspaces ``w = e_j`` (m2 = d)."""
        return np.eye(self.d, dtype=np.int64)

    def record_universe(self) -> NDArray[np.float64]:
        U = super().record_universe()
        return 2.0 * U - 1.0 if self.domain == "pm1" else U

    def encode(self, X: ArrayLike) -> NDArray[np.float64]:
        arr = np.asarray(X, dtype=np.float64)
        if arr.ndim != 2 or arr.shape[1] != self.d:
            raise ValueError(f"records must have shape (n, {self.d}), got {arr.shape}")
        allowed = (0.0, 1.0) if self.domain == "01" else (-1.0, 1.0)
        if not np.isin(arr, allowed).all():
            raise ValueError(f"records must be in {set(allowed)}^{self.d} (domain {self.domain!r})")
        return arr
