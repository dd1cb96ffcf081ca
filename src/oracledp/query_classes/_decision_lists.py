"""Monotone 1-decision lists over {0,1}^d (spec ``docs/specs/oracle-query.md`` section 2, note (a)).

A monotone 1-decision list is a sequence of rules "if ``x_j`` then output ``b``"
(positive literals only, each variable at most once) followed by a default bit:
the output on ``x`` is the bit of the first rule whose variable is on, or the
default if none is.

Canonical parameterization (one row per *function*)
---------------------------------------------------
Two lists can compute the same function: consecutive rules with the same bit can
be reordered, and trailing rules whose bit equals the default can be dropped.  So a
function is written as ordered *blocks* ``B_1, .., B_k`` (non-empty disjoint sets of
variables; the rules of one block share one bit), bits alternating between blocks,
the last block's bit different from the default ``b``.  Block ``t`` then outputs
``1 - b`` if ``k - t`` is even and ``b`` otherwise.  A parameter row has length
``d + 1``::

    (r_1, .., r_d, b)    r_j in {0..d}: block of x_j (0 = x_j absent); b = default bit

and is valid iff the used ranks are exactly ``{1, .., k}`` for some ``k`` (no gaps).
Distinct canonical rows compute distinct functions (checked by brute force for
d <= 3 in the tests: their truth tables on {0,1}^d are pairwise distinct), which is
what makes the separator below injective on the class *as parameterized*.
The class size is ``2 * sum_s C(d, s) F(s)`` with ``F`` the Fubini numbers
(ordered set partitions): 4, 12, 52, 300, 2164, 18732 for d = 1..6.

Separator (note (a)): ``U = {0} ∪ {e_i} ∪ {e_i + e_j : i < j}``, m = 1 + d + C(d, 2).
Dropping ``0`` breaks injectivity: OR of all variables ("if x_1 then 1, .., default 0")
and the constant 1 agree on every other point of U.
Dual separator: the dictators ``x_j`` (the list "if x_j then 1", default 0), m2 = d.

Oracles: enumeration (``make_class_oracle(cls, "brute")``) and an exact HiGHS MIP
(``make_class_oracle(cls, "highs")``: pairwise order binaries with no 3-cycles, one
"fires" binary per point and on-variable; see :mod:`oracledp.query_classes._mip`).  The MIP is
exact but slow beyond d of about 6 (no symmetry breaking).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from numpy.typing import ArrayLike, NDArray

from oracledp.query_classes._base import _FeatureClass, _integer_rows

__all__ = ["MonotoneDecisionLists", "decision_list_rules", "fubini"]


def fubini(n: int) -> int:
    """Number of ordered set partitions of an n-set (Fubini numbers 1, 1, 3, 13, 75, ...)."""
    f = [1]
    for k in range(1, n + 1):
        f.append(sum(math.comb(k, i) * f[k - i] for i in range(1, k + 1)))
    return f[n]


@lru_cache(maxsize=16)
def _rank_vectors(d: int) -> tuple[tuple[int, ...], ...]:
    """All rank vectors (r_1..r_d) whose used ranks are {1..k} (ordered partitions of subsets)."""
    out: list[tuple[int, ...]] = []

    def rec(remaining: int, ranks: list[int], block: int) -> None:
        out.append(tuple(ranks))
        # choose the next block: a non-empty subset of the remaining variables
        sub = remaining
        while sub:
            new = ranks.copy()
            for j in range(d):
                if sub >> j & 1:
                    new[j] = block
            rec(remaining & ~sub, new, block + 1)
            sub = (sub - 1) & remaining

    rec((1 << d) - 1, [0] * d, 1)
    return tuple(out)


@dataclass(frozen=True)
class MonotoneDecisionLists(_FeatureClass):
    """Monotone 1-decision lists in canonical block form; separator ``{0} ∪ {e_i} ∪ {e_i+e_j}``."""

    name = "monotone-decision-lists"

    @property
    def param_dim(self) -> int:
        return self.d + 1

    @property
    def size(self) -> int:
        d = self.d
        return 2 * sum(math.comb(d, s) * fubini(s) for s in range(d + 1))

    def _enumerate(self) -> NDArray[np.int64]:
        R = np.array(_rank_vectors(self.d), dtype=np.int64).reshape(-1, self.d)
        n = R.shape[0]
        P = np.zeros((2 * n, self.d + 1), dtype=np.int64)
        P[:n, :-1] = R
        P[n:, :-1] = R
        P[n:, -1] = 1
        return P

    def check_params(self, params: ArrayLike) -> NDArray[np.int64]:
        P = _integer_rows(params, self.param_dim, self.name)
        R, b = P[:, :-1], P[:, -1]
        if not np.isin(b, (0, 1)).all():
            raise ValueError(f"{self.name}: the default bit (last column) must be 0 or 1")
        if ((R < 0) | (R > self.d)).any():
            raise ValueError(f"{self.name}: ranks must lie in 0..{self.d} (0 = variable absent)")
        # used ranks must be exactly {1..k}, k = max rank (canonical block form)
        k = R.max(axis=1)
        present = np.zeros((P.shape[0], self.d + 1), dtype=bool)
        np.put_along_axis(present, R, True, axis=1)
        need = np.arange(self.d + 1)[None, :] <= k[:, None]
        need[:, 0] = False
        present[:, 0] = False
        if (need & ~present).any():
            raise ValueError(
                f"{self.name}: ranks must use every block 1..k without gaps (canonical form)"
            )
        return P

    def _evaluate(self, params: NDArray[np.int64], Z: NDArray[np.float64]) -> NDArray[np.uint8]:
        R, b = params[:, :-1], params[:, -1]
        k = R.max(axis=1)
        Zi = Z.astype(np.int64).T  # (d, n)
        out = np.repeat(b.astype(np.uint8)[:, None], Z.shape[0], axis=1)
        decided = np.zeros(out.shape, dtype=bool)
        for t in range(1, self.d + 1):
            active = k >= t
            if not active.any():
                break
            hit = ((R == t).astype(np.int64) @ Zi > 0) & ~decided
            bit = np.where((k - t) % 2 == 0, 1 - b, b).astype(np.uint8)
            out = np.where(hit, bit[:, None], out)
            decided |= hit
        return out.astype(np.uint8)

    def separator(self) -> NDArray[np.float64]:
        """``{0} ∪ {e_i} ∪ {e_i + e_j : i < j}`` (m = 1 + d + C(d, 2)), note (a)."""
        d = self.d
        rows = [np.zeros(d)]
        rows.extend(np.eye(d))
        for i in range(d):
            for j in range(i + 1, d):
                u = np.zeros(d)
                u[[i, j]] = 1.0
                rows.append(u)
        return np.array(rows, dtype=np.float64).reshape(-1, d)

    def dual_separator(self) -> NDArray[np.int64]:
        """Dictators ``x_j`` = "if x_j then 1, default 0" (rank 1 on j, m2 = d)."""
        P = np.zeros((self.d, self.d + 1), dtype=np.int64)
        P[np.arange(self.d), np.arange(self.d)] = 1
        return P


def decision_list_rules(params: ArrayLike, d: int) -> tuple[list[tuple[list[int], int]], int]:
    """Human-readable form of one row: ([(variables of block t, bit), ...], default)."""
    P = MonotoneDecisionLists(d).check_params(params)[0]
    R, b = P[:-1], int(P[-1])
    k = int(R.max())
    blocks = [([int(j) for j in np.flatnonzero(R == t)], (1 - b) if (k - t) % 2 == 0 else b)
              for t in range(1, k + 1)]
    return blocks, b
