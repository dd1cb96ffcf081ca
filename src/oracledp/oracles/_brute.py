"""Brute-force oracle: enumerates W.  Exact and always certified; for tests and tiny d."""

from __future__ import annotations

import time
import weakref

import numpy as np
from numpy.typing import NDArray

from oracledp.oracles._base import OracleResult, OracleStatus, make_result
from oracledp.oracles._exact import ExactObjective, band_tolerance, opdisc_noise_magnitude
from oracledp.oracles._halfspace import HalfspaceProblem, Perturbation
from oracledp.oracles._space import IntegerBall

_CHUNK_ENTRIES = 4_000_000  # score matrix entries (groups x points) computed at a time


def ball_points(space: IntegerBall, max_points: int = 2_000_000) -> NDArray[np.int64]:
    """Every k of an :class:`IntegerBall`, in lexicographic order (as ``enumerate_k``).

    Built coordinate by coordinate, keeping only prefixes whose squared norm fits,
    so the work is proportional to |W| rather than to the box ``(2 k_max + 1)^d``.
    """
    n = space.size()
    if n > max_points:
        raise ValueError(f"W has {n} points; refusing to enumerate more than {max_points}")
    cap = space.k_norm2_max
    vals = np.arange(-space.k_max, space.k_max + 1, dtype=np.int64)
    sq = vals * vals
    pts = np.zeros((1, 0), dtype=np.int64)
    norm2 = np.zeros(1, dtype=np.int64)
    for _ in range(space.d):
        cand = norm2[:, None] + sq[None, :]
        rows, cols = np.nonzero(cand <= cap)  # row-major: prefix first, then value ascending
        pts = np.hstack([pts[rows], vals[cols][:, None]])
        norm2 = cand[rows, cols]
    return pts


def exact_losses(problem: HalfspaceProblem, K: NDArray[np.int64]) -> NDArray[np.int64]:
    """Exact 0/1 loss of every row of K, in chunks (integer arithmetic throughout)."""
    groups = getattr(problem, "n_groups", None)
    if groups is None:  # a duck-typed problem (tests): one call
        return np.asarray(problem.loss_k(K), dtype=np.int64)
    out = np.empty(K.shape[0], dtype=np.int64)
    step = max(1, _CHUNK_ENTRIES // max(1, int(groups)))
    for s in range(0, K.shape[0], step):
        out[s : s + step] = problem.loss_k(K[s : s + step])
    return out


class BruteForceOracle:
    """Exact argmin by enumeration of every point of W (vectorized over noise draws).

    Points whose float objectives lie within the float band of the minimum are compared
    exactly (:mod:`oracledp.oracles._exact`); exact ties (probability zero under
    continuous noise) go to the lexicographically smallest k, the first point in
    enumeration order.
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
        space = problem.space
        if type(space) is IntegerBall:
            K = ball_points(space, self.max_points)
        else:  # another space type: its own enumeration
            K = space.enumerate_k(self.max_points)
        loss = exact_losses(problem, K).astype(np.float64)
        P = problem.space.pi_k(K)
        tables = (K, loss, P)
        try:
            self._cache[problem] = tables
        except TypeError:
            pass
        return tables

    def argmin_batch(self, problem: HalfspaceProblem, etas: NDArray[np.floating]) -> NDArray[np.int64]:
        """Index into ``enumerate_k`` of the argmin for each row of ``etas`` (shape (m, d+1)).

        Exact like :meth:`solve` (rows with a near tie are decided exactly); a comparison
        undecided at the precision limit (never seen) keeps the float argmin.
        """
        K, loss, P = self._tables(problem)
        etas = np.atleast_2d(np.asarray(etas, dtype=np.float64))
        out = np.empty(etas.shape[0], dtype=np.int64)
        K2 = int((K * K).sum(axis=1).max(initial=1))
        k_max = int(np.abs(K).max(initial=1))
        cap = getattr(problem.space, "k_norm2_max", K2)
        n_terms = int(problem.space.d) + int(cap) + 17
        max_loss = float(loss.max(initial=0.0))
        step = max(1, 2_000_000 // max(1, P.shape[0]))
        for s in range(0, etas.shape[0], step):
            obj = loss[None, :] - etas[s : s + step] @ P.T
            idx = obj.argmin(axis=1)
            mins = obj[np.arange(len(idx)), idx]
            tols = band_tolerance(n_terms, max_loss, opdisc_noise_magnitude(
                etas[s : s + step], k_max, K2))
            near = (obj <= (mins + 2.0 * tols)[:, None]).sum(axis=1)
            for r in np.flatnonzero(near > 1):
                i, _ = ExactObjective(problem, etas[s + r]).argmin(K, obj[r], losses=loss)
                if i is not None:
                    idx[r] = i
            out[s : s + step] = idx
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
        i, near = ExactObjective(problem, eta).argmin(K, obj, losses=loss)
        exact = i is not None
        if i is None:  # an exact comparison undecided at the precision limit: refuse
            i = int(obj.argmin())
        return make_result(problem, eta, K[i], float(obj[i]), OracleStatus.OPTIMAL,
                           time.perf_counter() - t0, self.name, exact=exact,
                           points=int(K.shape[0]), near_ties=near)
