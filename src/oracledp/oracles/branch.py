"""Exact branch-and-bound over the integer weights, with vectorized interval bounds.

For tables with many numeric columns (where the tabular decomposition of
:mod:`oracledp.oracles.structured` does not apply and the monolithic big-M MIP
rarely closes its gap) this oracle searches W directly, one coordinate at a
time, and proves optimality in integer arithmetic.

Objective (integer coordinates ``k``, see :mod:`oracledp.oracles.halfspace`)::

    F(k) = loss(k) + P(k),   loss(k) = sum_g n_pos_g 1[S_g <= 0] + n_neg_g 1[S_g >= 0],
    S_g = N_g . k (an exact integer),   P(k) = sum_j c_j(k_j) + h(||k||^2),

with ``P`` any separable perturbation (OPDisc's normalized linear term, RSPM's
separator weights: :class:`~oracledp.oracles.halfspace.Perturbation`).

Search.  Coordinates are fixed in an order chosen per call (largest spread of the
value costs first: a speed choice that never changes the answer).  A node fixes a
prefix; the search is depth first, children best bound first, expanded in batches
(numpy over nodes x groups).

Bounds at a node (prefix fixed, partial scores ``s_g``, squared norm used ``r``,
remaining budget ``b = cap - r``):

* **Loss, exact integers.**  The free coordinates change ``S_g`` by at most
  ``R_g = min(min(k_max, isqrt(b)) A_g, CS_g)``, ``A_g`` = sum of ``|N_gj|`` over the
  free coordinates and ``CS_g = isqrt(B_g b) + 1`` (Cauchy-Schwarz, ``B_g`` = sum of
  ``N_gj^2``; used only where ``B_g cap < 2^52``, so every quantity is an exact
  integer).  Positives of ``g`` are certainly wrong if ``s_g + R_g <= 0``, negatives
  if ``s_g - R_g >= 0``; a group with both labels always costs at least
  ``min(n_pos_g, n_neg_g)`` (sgn(0) = 0 makes a point on the hyperplane an error for
  both).  The sum of these integer counts is a lower bound on the loss of every
  completion; at a leaf ``R = 0`` and the exact loss is used.
* **Perturbation, exact minimum.**  ``min`` over completions of the free value costs
  plus ``h`` is computed exactly by a dynamic program over the squared-norm budget
  (tables ``G[i][b]`` = best value costs of the free coordinates with squared norm
  exactly ``b``).  It is the only floating-point part (the noise is a float): every
  lower bound is lowered by an explicit rounding allowance
  ``(d + 8) 2^-50 (1 + sum_j max|c_j| + max|h|)``, far above the error of the at most
  ``d + 3`` floating-point additions that form it (unit roundoff 2^-53 each), and far
  below :data:`~oracledp.oracles.base.CERTIFY_ABS_TOL`.

Certificate.  A node is discarded when its (lowered) bound reaches the incumbent's
exact objective minus 1e-9; the bound reported is ``min(incumbent, every discarded
or open node's bound)``, so a finished search has a gap of at most 1e-9 and
:func:`~oracledp.oracles.base.make_result` re-evaluates the returned point exactly
(integer loss) before certifying.  A search stopped by the time limit is never
certified.  No solver is involved: nothing is trusted but integer comparisons and
the rounding allowance above.
"""

from __future__ import annotations

import math
import time
import weakref
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from oracledp.oracles.base import OracleResult, OracleStatus, make_result
from oracledp.oracles.halfspace import HalfspaceProblem, Perturbation, as_perturbation

_PRUNE_TOL = 1e-9
_EXACT_FLOAT = 2**52
_U = 2.0**-50  # 8 unit roundoffs


@dataclass
class _Data:
    """Problem data after exact reduction (per problem, independent of the noise)."""

    N: NDArray[np.int64]  # (g, d) reduced distinct rows (non-zero)
    w_pos: NDArray[np.float64]  # n_pos - min(n_pos, n_neg)
    w_neg: NDArray[np.float64]
    n_pos: NDArray[np.int64]  # original counts of the reduced rows (exact leaf loss)
    n_neg: NDArray[np.int64]
    const: int  # errors of every k: zero rows, plus sum min(n_pos, n_neg)
    zero_rows: int  # errors of the all-zero rows
    absN: NDArray[np.int64]
    sqN: NDArray[np.int64] | None  # N^2 when Cauchy-Schwarz stays exact, else None


def _reduce(problem: HalfspaceProblem) -> _Data:
    N = np.asarray(problem.N, dtype=np.int64)
    n_pos = np.asarray(problem.n_pos, dtype=np.int64)
    n_neg = np.asarray(problem.n_neg, dtype=np.int64)
    keep = (N != 0).any(axis=1)
    zero_rows = int(n_pos[~keep].sum() + n_neg[~keep].sum())
    N, n_pos, n_neg = N[keep], n_pos[keep], n_neg[keep]
    if len(N):
        # S_g and S_g / gcd(N_g) have the same sign for every k: divide, then merge equal rows
        N = N // np.gcd.reduce(np.abs(N), axis=1)[:, None]
        N, inv = np.unique(N, axis=0, return_inverse=True)
        inv = inv.ravel()
        n_pos = np.bincount(inv, weights=n_pos, minlength=len(N)).astype(np.int64)
        n_neg = np.bincount(inv, weights=n_neg, minlength=len(N)).astype(np.int64)
    m = np.minimum(n_pos, n_neg)
    absN = np.abs(N)
    cap = problem.space.k_norm2_max
    sq_f = (absN.astype(np.float64) ** 2).sum(axis=1)
    sqN = N * N if (len(N) == 0 or float(sq_f.max()) * cap < _EXACT_FLOAT / 4) else None
    return _Data(N=N, w_pos=(n_pos - m).astype(np.float64), w_neg=(n_neg - m).astype(np.float64),
                 n_pos=n_pos, n_neg=n_neg, const=zero_rows + int(m.sum()), zero_rows=zero_rows,
                 absN=absN, sqN=sqN)


def _isqrt_up(x: NDArray[np.int64]) -> NDArray[np.int64]:
    """An integer >= isqrt(x) for every entry (x exact in float64: below 2^52)."""
    return np.floor(np.sqrt(x.astype(np.float64))).astype(np.int64) + 1


def branch_applicable(problem: HalfspaceProblem) -> bool:
    """Whether the search applies (always: exact int64 scores are checked by the problem)."""
    return problem.N.shape[1] >= 1


class BranchBoundOracle:
    """Exact oracle by depth-first branch-and-bound over k (numpy, no solver).

    Parameters
    ----------
    time_limit:
        Seconds per solve; a search stopped by it is not certified.
    batch_entries:
        Largest nodes x groups score block expanded at once (memory / speed).
    max_batch:
        Largest number of nodes expanded together (smaller = closer to plain DFS).
    """

    name = "branch-bound"

    def __init__(self, *, time_limit: float = 60.0, batch_entries: int = 4_000_000,
                 max_batch: int = 128, threads: int = 1, verbose: bool = False) -> None:
        if not (time_limit > 0):
            raise ValueError(f"time_limit must be > 0, got {time_limit!r}")
        self.time_limit = float(time_limit)
        self.batch_entries = int(batch_entries)
        self.max_batch = max(1, int(max_batch))
        self.verbose = verbose
        self._cache: weakref.WeakKeyDictionary[HalfspaceProblem, _Data] = (
            weakref.WeakKeyDictionary()
        )

    def _data(self, problem: HalfspaceProblem) -> _Data:
        data = self._cache.get(problem)
        if data is None:
            data = _reduce(problem)
            self._cache[problem] = data
        return data

    # ------------------------------------------------------------------ tables
    @staticmethod
    def _radius_tables(data: _Data, order: NDArray[np.int64], kmax: int,
                       cap: int) -> NDArray[np.int64]:
        """Rt[i, b, g]: bound on |sum_{free j} N_gj k_j| with order[:i] fixed, budget b."""
        d = len(order)
        g = data.N.shape[0]
        A = np.zeros((d + 1, g), dtype=np.int64)  # A[i] = sum over order[i:] of |N|
        A[:d] = np.cumsum(data.absN[:, order[::-1]], axis=1)[:, ::-1].T
        budgets = np.arange(cap + 1, dtype=np.int64)
        step = np.minimum(kmax, np.floor(np.sqrt(budgets) + 1e-9).astype(np.int64))
        Rt = A[:, None, :] * step[None, :, None]
        if data.sqN is not None:
            B = np.zeros((d + 1, g), dtype=np.int64)
            B[:d] = np.cumsum(data.sqN[:, order[::-1]], axis=1)[:, ::-1].T
            cs = _isqrt_up(B[:, None, :] * budgets[None, :, None])
            cs[:, 0, :] = 0
            cs[d] = 0
            Rt = np.minimum(Rt, cs)
        return Rt

    @staticmethod
    def _pert_tables(pert: Perturbation, order: NDArray[np.int64], kmax: int,
                     cap: int) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """H[i, r]: exact min over the free coordinates order[i:] of value costs + norm cost,
        given squared norm r used by the prefix (+inf if no completion fits).  Also G."""
        d = len(order)
        vals = np.arange(-kmax, kmax + 1)
        sq = vals * vals
        G = np.full((d + 1, cap + 1), np.inf)
        G[d, 0] = 0.0
        for i in range(d - 1, -1, -1):
            vc = pert.value_cost[order[i]]
            cur = np.full(cap + 1, np.inf)
            for a, s in zip(vc, sq, strict=True):
                if s <= cap:
                    cur[s:] = np.minimum(cur[s:], G[i + 1, : cap + 1 - s] + a)
            G[i] = cur
        nc = pert.norm_cost
        H = np.full((d + 1, cap + 1), np.inf)
        for r in range(cap + 1):
            H[:, r] = (G[:, : cap + 1 - r] + nc[None, r:]).min(axis=1)
        return G, H

    order_rule = "product"

    def _order(self, data: _Data, spread: NDArray[np.float64]) -> NDArray[np.int64]:
        mass = data.absN.sum(axis=0).astype(np.float64)
        key = {"spread": spread, "mass": mass, "product": spread * mass,
               "rev": -spread,
               "wmass": (data.absN * (data.n_pos + data.n_neg)[:, None]).sum(axis=0) * 1.0,
               "mass_sp": mass * np.sqrt(spread + 1e-300)}[self.order_rule]
        return np.argsort(-key, kind="stable").astype(np.int64)

    # ------------------------------------------------------------------ search
    def solve(self, problem: HalfspaceProblem,
              eta: NDArray[np.floating] | Perturbation) -> OracleResult:
        """Minimize loss + perturbation exactly (eta: OPDisc's noise vector, or a Perturbation)."""
        t0 = time.perf_counter()
        sp = problem.space
        kmax, cap, d = sp.k_max, sp.k_norm2_max, sp.d
        pert = as_perturbation(sp, eta)
        data = self._data(problem)
        vc_all = pert.value_cost
        spread = vc_all.max(axis=1) - vc_all.min(axis=1)
        order = self._order(data, spread)
        Rt = self._radius_tables(data, order, kmax, cap)
        G, H = self._pert_tables(pert, order, kmax, cap)
        mag = 1.0 + float(np.abs(vc_all).max(axis=1).sum()) + float(np.abs(pert.norm_cost).max())
        slack = (d + 8) * _U * mag
        vals = np.arange(-kmax, kmax + 1, dtype=np.int64)
        sq = vals * vals
        # scores and radii stay below kmax sum_j |N_gj| (and the radii below that + 1):
        # int32 when that fits, which halves the memory traffic of the bound evaluation
        worst = int(data.absN.sum(axis=1).max(initial=0)) * kmax + 2
        dt = np.int32 if worst < 2**31 - 1 else np.int64
        Rt = Rt.astype(dt)
        Nord = data.N[:, order].astype(dt)  # columns in search order
        g = data.N.shape[0]
        const = float(data.const)

        def exact_obj(k_ord: NDArray[np.int64]) -> float:
            k = np.zeros(d, dtype=np.int64)
            k[order] = k_ord
            return float(problem.objective_k(k, pert)[0])

        # incumbents: k = 0 and the perturbation-only minimizer (DP backtrack)
        best_val = exact_obj(np.zeros(d, dtype=np.int64))
        best_k = np.zeros(d, dtype=np.int64)
        r_best = int(np.argmin(G[0] + pert.norm_cost))
        k_p = np.zeros(d, dtype=np.int64)
        b = r_best
        for i in range(d):
            vc = vc_all[order[i]]
            cand = np.where(sq <= b, vc + G[i + 1, np.clip(b - sq, 0, cap)], np.inf)
            a = int(np.argmin(cand))
            k_p[i] = vals[a]
            b -= int(sq[a])
        v = exact_obj(k_p)
        if v < best_val:
            best_val, best_k = v, k_p

        pruned_min = math.inf
        # stack of batches: (level, S (m, g), r (m,), fc (m,), K (m, level), lb (m,))
        stack: list[tuple[int, NDArray, NDArray, NDArray, NDArray, NDArray]] = [
            (0, np.zeros((1, g), dtype=dt), np.zeros(1, dtype=np.int64), np.zeros(1),
             np.zeros((1, 0), dtype=np.int64), np.array([-math.inf]))
        ]
        nodes = 0
        level_nodes = np.zeros(d, dtype=np.int64)
        status = OracleStatus.OPTIMAL
        # 0/1 masks times integer counts: float64 sums are exact below 2^53 records
        fdt = np.float64
        wp, wn = data.w_pos.astype(fdt), data.w_neg.astype(fdt)
        per_node = max(1, g * len(vals))
        cap_nodes = max(1, min(self.max_batch, self.batch_entries // per_node))
        while stack:
            if time.perf_counter() - t0 > self.time_limit:
                status = OracleStatus.TIME_LIMIT
                break
            lvl, S, r, fc, K, lb = stack.pop()
            alive = lb < best_val - _PRUNE_TOL
            if not alive.all():
                pruned_min = min(pruned_min, float(lb[~alive].min()))
                if not alive.any():
                    continue
                S, r, fc, K = S[alive], r[alive], fc[alive], K[alive]
            col = Nord[:, lvl]
            rc = r[:, None] + sq[None, :]
            ok = rc <= cap
            fcc = fc[:, None] + vc_all[order[lvl]][None, :]
            plb = fcc + np.where(ok, H[lvl + 1, np.minimum(rc, cap)], np.inf) + const - slack
            good = ok & (plb < best_val - _PRUNE_TOL)
            bad = ok & ~good
            if bad.any():
                pruned_min = min(pruned_min, float(plb[bad].min()))
            mi, vi = np.nonzero(good)
            if len(mi) == 0:
                continue
            nodes += len(mi)
            level_nodes[lvl] += len(mi)
            Sc = S[mi] + vals[vi].astype(dt)[:, None] * col[None, :]
            rcc = rc[mi, vi]
            Kc = np.hstack([K[mi], vals[vi][:, None]])
            fch = fcc[mi, vi]
            if lvl + 1 == d:  # leaves: exact objective
                loss = (data.zero_rows + (Sc <= 0).astype(np.float64) @ data.n_pos
                        + (Sc >= 0).astype(np.float64) @ data.n_neg)
                obj = loss + fch + pert.norm_cost[rcc]
                j = int(np.argmin(obj))
                if obj[j] < best_val:
                    cand_k = Kc[j].copy()
                    val = exact_obj(cand_k)  # the same expression make_result uses
                    if val < best_val:
                        best_val, best_k = val, cand_k
                rest = obj - slack
                rest[j] = math.inf
                pruned_min = min(pruned_min, float(rest.min(initial=math.inf)))
                continue
            R = Rt[lvl + 1][cap - rcc]
            llb = (np.less_equal(Sc, -R).astype(fdt) @ wp + np.greater_equal(Sc, R).astype(fdt) @ wn)
            llb[~np.isfinite(llb)] = 0.0  # never happens (0/1 times counts); 0 is always valid
            lbc = plb[mi, vi] + llb
            keep = lbc < best_val - _PRUNE_TOL
            if not keep.all():
                pruned_min = min(pruned_min, float(lbc[~keep].min()))
            idx = np.flatnonzero(keep)
            if len(idx) == 0:
                continue
            idx = idx[np.argsort(lbc[idx], kind="stable")]
            # push worst chunks first so the best is expanded next
            chunks = [idx[s: s + cap_nodes] for s in range(0, len(idx), cap_nodes)]
            for ch in reversed(chunks):
                stack.append((lvl + 1, Sc[ch], rcc[ch], fch[ch], Kc[ch], lbc[ch]))
        open_min = math.inf
        if status is OracleStatus.TIME_LIMIT:
            open_min = min((float(item[5].min()) for item in stack), default=math.inf)
        bound = min(best_val, pruned_min, open_min)
        k = np.zeros(d, dtype=np.int64)
        k[order] = best_k
        return make_result(problem, eta, k, bound, status, time.perf_counter() - t0, self.name,
                           nodes=nodes, level_nodes=level_nodes.tolist())
