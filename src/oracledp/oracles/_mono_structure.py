"""Solver-independent structure of the monolithic MIP, and a solver's raw answer.

Private helper of :mod:`oracledp.oracles._monolithic` (whose module docstring states
the formulation and its exact presolve): :class:`_Structure` holds the integer data
both solver models are built from (the gcd-reduced and merged group rows, their exact
big-M bounds ``M_g``, the attainable squared norms ``v`` and the objective
coefficients of ``k`` and ``u`` for a noise vector ``eta``); :func:`_structure` builds
it from a :class:`~oracledp.oracles._halfspace.HalfspaceProblem`.  :class:`_Raw` is a
solver's answer before the oracle certifies it (it crosses the worker pipe).
No solver is imported here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from oracledp.oracles._base import OracleStatus
from oracledp.oracles._halfspace import HalfspaceProblem, gcd_reduced_rows


# --------------------------------------------------------------------------------------------
# Solver-independent structure of the MIP
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Structure:
    d: int
    k_max: int
    K2: int  # space.max_k_norm2: D^2 / tau^2 in pi
    norms: NDArray[np.int64]  # attainable ||k||^2, ascending (starts with 0)
    N: NDArray[np.int64]  # rows of the groups that some k can classify (a non-zero entry)
    M: NDArray[np.int64]  # exact bound on |N_g . k| over W, >= 1
    n_pos: NDArray[np.int64]
    n_neg: NDArray[np.int64]
    n_total: int  # loss when every example is misclassified
    pos: NDArray[np.int64] = field(init=False)  # indices (into N) of groups with a positive
    neg: NDArray[np.int64] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "pos", np.flatnonzero(self.n_pos > 0))
        object.__setattr__(self, "neg", np.flatnonzero(self.n_neg > 0))

    @property
    def values(self) -> NDArray[np.int64]:
        """The non-zero values a of one coordinate, in the order of the z_{j,a} columns."""
        return np.array([a for a in range(-self.k_max, self.k_max + 1) if a != 0], dtype=np.int64)

    def costs(self, eta: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Objective coefficients of k (per coordinate) and of u (per attainable squared norm).

        Same floating-point expressions as :meth:`IntegerBall.pi_k`.
        """
        c_k = -(eta[: self.d] / math.sqrt(self.K2))
        last = np.sqrt(np.clip(1.0 - self.norms / self.K2, 0.0, None))
        return c_k, -(eta[self.d] * last)


def _attainable_norms(d: int, k_max: int, cap: int) -> NDArray[np.int64]:
    reach = np.zeros(cap + 1, dtype=bool)
    reach[0] = True
    squares = [a * a for a in range(k_max + 1) if a * a <= cap]
    for _ in range(d):
        new = np.zeros_like(reach)
        for s in squares:
            new[s:] |= reach[: cap + 1 - s]
        if (new == reach).all():
            break
        reach = new
    return np.flatnonzero(reach).astype(np.int64)


def _structure(problem: HalfspaceProblem) -> _Structure:
    space = problem.space
    k_max, cap = space.k_max, space.k_norm2_max
    N = np.asarray(problem.N, dtype=np.int64)
    n_pos = np.asarray(problem.n_pos, dtype=np.int64)
    n_neg = np.asarray(problem.n_neg, dtype=np.int64)
    n_total = int(n_pos.sum() + n_neg.sum())
    # Exact reduction (the margin S >= 1 becomes S >= gcd: a tighter relaxation); an
    # all-zero row has S = 0 and is always misclassified.
    N, n_pos, n_neg = gcd_reduced_rows(N, n_pos, n_neg)
    box = np.abs(N).sum(axis=1) * k_max  # <= 2^52 (checked by HalfspaceProblem.from_data)
    # Cauchy-Schwarz in exact integers: |S| <= sqrt(||N_g||^2 ||k||^2), and S is an integer
    cs = np.array(
        [math.isqrt(sum(int(v) * int(v) for v in row) * cap) for row in N], dtype=np.int64
    ).reshape(-1)
    M = np.minimum(box, cs)  # >= 1 for a non-zero row
    return _Structure(
        d=int(space.d),
        k_max=int(k_max),
        K2=int(space.max_k_norm2),
        norms=_attainable_norms(int(space.d), int(k_max), int(cap)),
        N=N,
        M=M,
        n_pos=n_pos,
        n_neg=n_neg,
        n_total=n_total,
    )


@dataclass
class _Raw:
    """A solver's answer before exact re-evaluation (picklable, crosses the worker pipe)."""

    k: NDArray[np.int64] | None
    bound: float
    status: OracleStatus
    info: dict[str, Any] = field(default_factory=dict)
