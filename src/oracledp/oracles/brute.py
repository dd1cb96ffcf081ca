"""Brute-force oracle: enumerates W.  Exact and always certified; for tests and tiny d."""

from __future__ import annotations

import time
import weakref

import numpy as np
from numpy.typing import NDArray

from oracledp.oracles.base import OracleResult, OracleStatus, make_result
from oracledp.oracles.halfspace import HalfspaceProblem, Perturbation


class BruteForceOracle:
    """Exact argmin by enumeration of every point of W (vectorized over noise draws).

    Ties (probability zero under continuous noise) go to the first point in
    lexicographic order of k.
    """

    name = "brute"

    def __init__(self, max_points: int = 2_000_000) -> None:
        self.max_points = max_points
        self._cache: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    def _tables(self, problem: HalfspaceProblem) -> tuple[NDArray, NDArray, NDArray]:
        try:
            return self._cache[problem]
        except (KeyError, TypeError):
            pass
        K = problem.space.enumerate_k(self.max_points)
        loss = problem.loss_k(K).astype(np.float64)
        P = problem.space.pi_k(K)
        tables = (K, loss, P)
        try:
            self._cache[problem] = tables
        except TypeError:
            pass
        return tables

    def argmin_batch(self, problem: HalfspaceProblem, etas: NDArray[np.floating]) -> NDArray[np.int64]:
        """Index into ``enumerate_k`` of the argmin for each row of ``etas`` (shape (m, d+1))."""
        _, loss, P = self._tables(problem)
        etas = np.atleast_2d(np.asarray(etas, dtype=np.float64))
        out = np.empty(etas.shape[0], dtype=np.int64)
        step = max(1, 2_000_000 // max(1, P.shape[0]))
        for s in range(0, etas.shape[0], step):
            obj = loss[None, :] - etas[s : s + step] @ P.T
            out[s : s + step] = obj.argmin(axis=1)
        return out

    def solve_batch(self, problem: HalfspaceProblem, etas: NDArray[np.floating]) -> NDArray[np.int64]:
        """Integer argmin k for each noise row (shape (m, d))."""
        K, _, _ = self._tables(problem)
        return K[self.argmin_batch(problem, etas)]

    def solve(self, problem: HalfspaceProblem,
              eta: NDArray[np.floating] | Perturbation) -> OracleResult:
        """Exact argmin of loss + perturbation (eta: OPDisc's noise vector, or a Perturbation)."""
        t0 = time.perf_counter()
        K, loss, P = self._tables(problem)
        if isinstance(eta, Perturbation):
            obj = loss + eta.check(problem.space).evaluate_k(K, problem.space.k_max)
        else:
            obj = loss - P @ np.asarray(eta, dtype=np.float64)
        i = int(obj.argmin())
        return make_result(problem, eta, K[i], float(obj[i]), OracleStatus.OPTIMAL,
                           time.perf_counter() - t0, self.name, points=int(K.shape[0]))
