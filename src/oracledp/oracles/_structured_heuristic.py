"""Local-search incumbents of the structured oracle (:mod:`oracledp.oracles._structured`).

Phase 1 of its search: before any MIP, coordinate descent over the binary weights u for a
fixed outer candidate v (:func:`local_search`), from a few starts (:func:`heuristic`), gives
a strong incumbent and feasible starts for HiGHS.  Speed only: exactness comes from the
inner MIPs.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from oracledp.oracles._halfspace import HalfspaceProblem, Perturbation
from oracledp.oracles._structured_tables import _Prepared, terms


def heuristic(problem: HalfspaceProblem, prep: _Prepared, vi: int,
              pert: Perturbation, starts: list[NDArray[np.int64]],
              ) -> tuple[float, NDArray[np.int64]]:
    """Best local-search point for candidate vi over several starts (full objective value).

    Starts: the given points, zero, and a least-squares fit of u to each cell's best score.
    """
    lin, g, budget, const = terms(problem, prep, vi, pert)
    kmax = problem.space.k_max
    f = prep.loss_tables[vi]
    T = prep.T
    t = np.arange(-T, T + 1)
    mask = np.abs(t)[None, :] <= prep.T_cell[:, None]
    t_best = t[np.where(mask, f, np.iinfo(np.int64).max).argmin(axis=1)]
    weight = np.sqrt(f.max(axis=1) - f.min(axis=1) + 1.0)
    A = prep.cells.astype(np.float64) * weight[:, None]
    u_ls = np.linalg.lstsq(A, t_best * weight, rcond=None)[0]
    cand = [np.clip(np.rint(u_ls), -kmax, kmax).astype(np.int64),
            np.zeros(len(prep.cat_cols), dtype=np.int64), *starts]
    best_val, best_u = math.inf, cand[0]
    for u0 in cand:
        val, u = local_search(prep, vi, lin, g, budget, kmax, u0)
        if val < best_val:
            best_val, best_u = val, u
    return best_val + const, best_u


def local_search(prep: _Prepared, vi: int, lin: NDArray[np.float64], g: NDArray[np.float64],
                 budget: int, kmax: int, u0: NDArray[np.int64]) -> tuple[float, NDArray[np.int64]]:
    """Coordinate descent over u for fixed v (heuristic incumbent; exactness comes from the MIP).

    Objective without constants: sum_c f_c(t_c) + sum_j lin[j, u_j + kmax] + g[||u||^2].
    Returns (value, u) of a feasible point (u0 is repaired to the norm budget first).
    """
    assert prep.cells is not None
    cells = prep.cells.astype(np.int64)
    f = prep.loss_tables[vi]
    T = prep.T
    u = u0.copy()
    while (u**2).sum() > budget:  # repair: shrink the largest entry
        j = int(np.abs(u).argmax())
        u[j] -= np.sign(u[j])
    vals = np.arange(-kmax, kmax + 1)
    t = cells @ u
    idx_c = np.arange(cells.shape[0])
    big = float(np.abs(f).max() + np.abs(lin).sum() + np.abs(g).sum() + 1.0)

    def total(t_: NDArray[np.int64], u_: NDArray[np.int64]) -> float:
        if np.abs(t_).max(initial=0) > T:
            return np.inf
        return float(f[idx_c, t_ + T].sum() + lin[np.arange(len(u_)), u_ + kmax].sum()
                     + g[int((u_**2).sum())])

    cur = total(t, u)
    improved = True
    while improved:
        improved = False
        for j in range(len(u)):
            members = np.flatnonzero(cells[:, j])
            n2 = int((u**2).sum()) - int(u[j] ** 2)
            tt = t[members][:, None] + (vals - u[j])[None, :]  # (members, values)
            ok_t = (np.abs(tt) <= T).all(axis=0)
            ok_n = n2 + vals**2 <= budget
            loss_m = np.where(np.abs(tt) <= T, f[members[:, None], np.clip(tt, -T, T) + T],
                              big).sum(axis=0)
            cand = loss_m - f[members, t[members] + T].sum() + lin[j] - lin[j, u[j] + kmax]
            cand = cand + np.where(ok_n, g[np.clip(n2 + vals**2, 0, len(g) - 1)], np.inf) \
                - g[n2 + int(u[j] ** 2)]
            cand[~(ok_t & ok_n)] = np.inf
            a = int(cand.argmin())
            if cand[a] < -1e-9:
                t[members] += vals[a] - u[j]
                u[j] = vals[a]
                cur = total(t, u)
                improved = True
    return cur, u
