"""Exact branch-and-bound over the integer weights, with vectorized interval bounds.

For tables with many numeric columns (where the tabular decomposition of
:mod:`oracledp.oracles._structured` does not apply and the monolithic big-M MIP
rarely closes its gap) this oracle searches W directly, one coordinate at a
time, and proves optimality in integer arithmetic.

Objective (integer coordinates ``k``, see :mod:`oracledp.oracles._halfspace`)::

    F(k) = loss(k) + P(k),   loss(k) = sum_g n_pos_g 1[S_g <= 0] + n_neg_g 1[S_g >= 0],
    S_g = N_g . k (an exact integer),   P(k) = sum_j c_j(k_j) + h(||k||^2),

with ``P`` any separable perturbation (OPDisc's normalized linear term, RSPM's
separator weights: :class:`~oracledp.oracles._halfspace.Perturbation`).

Search.  Coordinates are fixed in an order chosen per call: the numeric columns, then
the declared 0/1 columns, each by decreasing (spread of the value costs) x (sum of
``|N_gj|``): a speed choice (``order_rule``) that never changes the answer.  A node
fixes a prefix; the search is depth first, children best bound first, expanded in
batches (numpy over nodes x groups).

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
* **Loss, cells of the free 0/1 columns (exact integers).**  With declared 0/1 columns
  (entries 0 or ``unit_g = Q / gcd_g`` after the exact gcd reduction, checked), the free
  0/1 part of a group's score is ``unit_g t_c``, where ``t_c`` is the sum of the free
  ``u_j`` of its pattern c (its *cell*), an integer with ``|t_c| <= min(size_c k_max,
  isqrt(size_c b))``.  Relaxing the cells to independent integers, the loss is at least
  ``sum_c min_t`` (errors certain at ``t`` for every numeric remainder in
  ``[-Rnum_g, Rnum_g]``): positives when ``t <= floor(-(s_g + Rnum_g) / unit_g)``,
  negatives when ``t >= ceil((Rnum_g - s_g) / unit_g)``.  The floors are taken of float64
  quotients of integers below 2^51 (exact: a non-integer quotient is at least
  ``1 / unit_g`` from an integer, far above the rounding error); the larger of the two
  loss bounds is used.
* **Perturbation, exact minimum.**  ``min`` over completions of the free value costs
  plus ``h`` is computed exactly by a dynamic program over the squared-norm budget
  (tables ``G[i][b]`` = best value costs of the free coordinates with squared norm
  exactly ``b``).  It is the only floating-point part (the noise is a float): every
  lower bound is lowered by an explicit rounding allowance
  ``(d + 8) 2^-50 (1 + sum_j max|c_j| + max|h|)``, far above the error of the at most
  ``d + 3`` floating-point additions that form it (unit roundoff 2^-53 each), and far
  below :data:`~oracledp.oracles._base.CERTIFY_ABS_TOL`.  The allowance is the float band
  ``tol`` of :mod:`oracledp.oracles._exact`, which also covers the difference between
  the float tables and OPDisc's exact (irrational) noise term.

Certificate (exact, see :mod:`oracledp.oracles._base`).  A node is discarded only when
its lowered bound is *strictly above* the incumbent's float objective plus ``tol``
(so above the incumbent's exact objective): no exact minimizer is ever discarded.
Every evaluated point within ``2 tol`` of the incumbent is kept as a candidate, and
when the search ends the candidates are compared exactly
(:meth:`~oracledp.oracles._exact.ExactObjective.argmin`, tie rule: smallest k).  The
bound reported is ``min(incumbent, every discarded or open node's bound)``, for
information.  A search stopped by the time limit is never certified.  No solver is
involved: nothing is trusted but integer comparisons, the rounding allowance above and
the exact comparison.
"""

from __future__ import annotations

import math
import time
import weakref
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from oracledp.oracles._base import (
    OracleResult,
    OracleStatus,
    check_time_limit,
    check_work_limit,
    make_result,
)
from oracledp.oracles._exact import ExactObjective
from oracledp.oracles._halfspace import (
    HalfspaceProblem,
    Perturbation,
    as_perturbation,
    gcd_reduced_rows,
)

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
    binary: NDArray[np.bool_]  # declared 0/1 columns whose reduced entries are 0 or unit_g
    unit: NDArray[np.int64]  # (g,) the non-zero value of the binary entries of row g (or 1)


def _reduce(problem: HalfspaceProblem) -> _Data:
    N = np.asarray(problem.N, dtype=np.int64)
    n_pos = np.asarray(problem.n_pos, dtype=np.int64)
    n_neg = np.asarray(problem.n_neg, dtype=np.int64)
    keep = (N != 0).any(axis=1)
    zero_rows = int(n_pos[~keep].sum() + n_neg[~keep].sum())
    N, n_pos, n_neg = gcd_reduced_rows(N, n_pos, n_neg)
    m = np.minimum(n_pos, n_neg)
    absN = np.abs(N)
    cap = problem.space.k_norm2_max
    sq_f = (absN.astype(np.float64) ** 2).sum(axis=1)
    sqN = N * N if (len(N) == 0 or float(sq_f.max()) * cap < _EXACT_FLOAT / 4) else None
    binary = np.asarray(problem.binary_columns, dtype=bool).copy()
    unit = absN[:, binary].max(axis=1, initial=0) if len(N) else np.zeros(0, dtype=np.int64)
    unit = np.where(unit > 0, unit, 1).astype(np.int64)
    # after the gcd division a 0/1 column holds 0 or Q / gcd_g: check it (exactly) per column
    for j in np.flatnonzero(binary):
        if not ((N[:, j] == 0) | (N[:, j] == unit)).all():
            binary[j] = False  # not a 0/1 column here: treated as numeric (bounds stay valid)
    return _Data(N=N, w_pos=(n_pos - m).astype(np.float64), w_neg=(n_neg - m).astype(np.float64),
                 n_pos=n_pos, n_neg=n_neg, const=zero_rows + int(m.sum()), zero_rows=zero_rows,
                 absN=absN, sqN=sqN, binary=binary, unit=unit)


def branch_applicable(problem: HalfspaceProblem) -> bool:
    """Whether the search applies (always: exact int64 scores are checked by the problem)."""
    return problem.N.shape[1] >= 1


class _Radius:
    """R[i](b)_g = min(min(k_max, isqrt(b)) A[i]_g, isqrt(B[i]_g b) + 1): a bound on the
    free part of group g's score (box and Cauchy-Schwarz; B only when B cap < 2^50, so the
    float square root of the exact integer B b, floored, plus one is >= isqrt(B b)).
    Tabulated over (level, budget) when small enough, else computed per batch."""

    def __init__(self, A: NDArray[np.int64], B: NDArray[np.int64] | None, kmax: int, cap: int,
                 dt: type, table: bool) -> None:
        budgets = np.arange(cap + 1, dtype=np.int64)
        self.step = np.minimum(kmax, np.floor(np.sqrt(budgets) + 1e-9).astype(np.int64))
        self.A, self.B, self.dt = A, B, dt
        self.table = None
        if table:
            self.table = np.stack([self._compute(i, budgets) for i in range(A.shape[0])])

    def _compute(self, i: int, b: NDArray[np.int64]) -> NDArray:
        R = self.step[b][:, None] * self.A[i][None, :]
        if self.B is not None:
            cs = np.floor(np.sqrt(self.B[i][None, :].astype(np.float64) * b[:, None])) + 1
            R = np.minimum(R, cs.astype(np.int64))
        return R.astype(self.dt)

    def __call__(self, i: int, b: NDArray[np.int64]) -> NDArray:
        if self.table is not None:
            return self.table[i][b]
        return self._compute(i, b)


DEFAULT_WORK_LIMIT = 400_000
"""The node limit of the estimators' default: about 1.5 minutes of a quiet 2-core machine
(benchmarks/work_rate.py, 2026-11-28, load 0.5-1.1: 3,711 nodes per second on a
135-feature table, so 108 s; docs/results/work-rate); deterministic, unlike a time limit."""


class BranchBoundOracle:
    """Exact oracle by depth-first branch-and-bound over k (numpy, no solver).

    Parameters
    ----------
    time_limit:
        Seconds per solve; a search stopped by it is not certified.
    work_limit:
        Deterministic limit: the nodes created per solve (None: no limit; the search stops,
        not certified, before an expansion that would pass it).  The search
        order depends only on the problem, the perturbation and the options, so whether a
        solve stops at this limit (not certified) is the same on every machine.
    batch_entries:
        Largest nodes x groups score block expanded at once (memory / speed).
    max_batch:
        Largest number of nodes expanded together (smaller = closer to plain DFS).
    """

    name = "branch-bound"
    #: largest (levels x budgets x groups) radius table kept in memory (else per batch)
    max_table = 30_000_000

    def __init__(self, *, time_limit: float = 60.0, work_limit: int | None = None,
                 batch_entries: int = 4_000_000, max_batch: int = 128, threads: int = 1,
                 verbose: bool = False) -> None:
        self.time_limit = check_time_limit(time_limit)
        self.work_limit = check_work_limit(work_limit)
        self.batch_entries = int(batch_entries)
        self.max_batch = max(1, int(max_batch))
        self.verbose = verbose
        self._cache: weakref.WeakKeyDictionary[HalfspaceProblem, _Data] = (
            weakref.WeakKeyDictionary()
        )
        self._tile_cache: dict[tuple[int, int, int], tuple[Any, ...]] = {}

    def _data(self, problem: HalfspaceProblem) -> _Data:
        data = self._cache.get(problem)
        if data is None:
            data = _reduce(problem)
            self._cache[problem] = data
        return data

    # ------------------------------------------------------------------ tables
    def _radius_tables(self, data: _Data, order: NDArray[np.int64], kmax: int, cap: int,
                       dt: type, only: NDArray[np.bool_] | None = None) -> _Radius:
        """Bounds on |sum_{free j} N_gj k_j| with order[:i] fixed, budget b
        (``only``: count only these columns as free)."""
        d = len(order)
        g = data.N.shape[0]
        absN = data.absN if only is None else data.absN * only[None, :]
        A = np.zeros((d + 1, g), dtype=np.int64)  # A[i] = sum over order[i:] of |N|
        A[:d] = np.cumsum(absN[:, order[::-1]], axis=1)[:, ::-1].T
        B = None
        if data.sqN is not None:
            sqN = data.sqN if only is None else data.sqN * only[None, :]
            B = np.zeros((d + 1, g), dtype=np.int64)
            B[:d] = np.cumsum(sqN[:, order[::-1]], axis=1)[:, ::-1].T
        return _Radius(A, B, kmax, cap, dt, table=(d + 1) * (cap + 1) * g <= self.max_table)

    @staticmethod
    def _cell_tables(data: _Data, order: NDArray[np.int64], kmax: int,
                     cap: int) -> list[tuple[NDArray[np.int64], NDArray[np.int64], int] | None]:
        """Per level i: (cell of each group, Tc[b, c], T) for the free 0/1 columns order[i:].

        A cell is a pattern of the free 0/1 columns; its free part of the score is
        ``unit_g t_c`` with ``t_c`` the sum of the free u_j of the pattern, an integer with
        ``|t_c| <= Tc[b, c] = min(size_c k_max, isqrt(size_c b))`` under the budget b.
        """
        d = len(order)
        out: list[tuple[NDArray[np.int64], NDArray[np.int64], int] | None] = []
        budgets = np.arange(cap + 1)
        for i in range(d + 1):
            free = order[i:][data.binary[order[i:]]]
            if len(free) == 0 or data.N.shape[0] == 0:
                out.append(None)
                continue
            pat = data.N[:, free] != 0
            cells, cell_of = np.unique(pat, axis=0, return_inverse=True)
            size = cells.sum(axis=1)
            Tc = np.minimum(size[None, :] * kmax,
                            np.floor(np.sqrt(size[None, :] * budgets[:, None]) + 1e-9))
            Tc = Tc.astype(np.int64)
            out.append((cell_of.ravel().astype(np.int64), Tc, int(Tc.max())))
        return out

    def _cell_bound(self, S: NDArray, Rn: NDArray, budget: NDArray[np.int64],
                    info: tuple[NDArray[np.int64], NDArray[np.int64], int], data: _Data,
                    pos: NDArray[np.int64], neg: NDArray[np.int64]) -> NDArray[np.float64]:
        """Loss lower bound of each node: sum over cells of min_t of the certain errors.

        Group g is certainly wrong at cell value t when, for every numeric remainder in
        [-Rn_g, Rn_g], positives: s_g + Rn_g + unit_g t <= 0, i.e. t <= a_g =
        floor(-(s_g + Rn_g) / unit_g); negatives: s_g - Rn_g + unit_g t >= 0, i.e.
        t >= b_g = ceil((Rn_g - s_g) / unit_g).  The floors are exact: x / unit_g for
        integers |x| < 2^52 (checked by the caller) is correctly rounded with an error
        below half the distance 1 / unit_g from a non-integer quotient to an integer, so
        ``floor`` of the float quotient is the integer floor.  The counts are summed
        exactly (bincount of integer weights below 2^53).
        """
        cell_of, Tc, T = info
        m = S.shape[0]
        ncell = Tc.shape[1]
        W = 2 * T + 2
        size = m * ncell * W
        base = (np.arange(m, dtype=np.float64)[:, None] * ncell) * W
        unit = data.unit.astype(np.float64)
        # one signed histogram per node and cell: -w at a_g + T + 1 (positives, clipped to
        # [0, 2T + 1], 0 = never wrong) and +w at b_g + T (negatives, clipped to [0, 2T + 1],
        # 2T + 1 = never wrong); then errors(t) = tot_pos_c + cumsum(hist)[t + T]
        a = np.add(S[:, pos], Rn[:, pos], dtype=np.float64)
        np.negative(a, out=a)
        np.divide(a, unit[pos][None, :], out=a)
        np.floor(a, out=a)
        np.clip(a, -T - 1, T, out=a)
        a += base
        a += (cell_of[pos] * W + T + 1).astype(np.float64)[None, :]
        b = np.subtract(S[:, neg], Rn[:, neg], dtype=np.float64)
        np.divide(b, unit[neg][None, :], out=b)
        np.floor(b, out=b)
        np.negative(b, out=b)
        np.clip(b, -T, T + 1, out=b)
        b += base
        b += (cell_of[neg] * W + T).astype(np.float64)[None, :]
        idx = np.concatenate([a.astype(np.intp).ravel(), b.astype(np.intp).ravel()])
        h = np.bincount(idx, weights=self._tiled(data, pos, neg, m), minlength=size)
        cum = np.cumsum(h.reshape(m, ncell, W), axis=2)[:, :, : 2 * T + 1]
        tot_pos = np.bincount(cell_of[pos], weights=data.w_pos[pos], minlength=ncell)
        f = cum + tot_pos[None, :, None]
        t = np.arange(-T, T + 1)
        allowed = np.abs(t)[None, None, :] <= Tc[budget][:, :, None]
        return np.where(allowed, f, np.inf).min(axis=2).sum(axis=1)

    def _tiled(self, data: _Data, pos: NDArray[np.int64], neg: NDArray[np.int64],
               m: int) -> NDArray[np.float64]:
        """[-w_pos[pos] m times, +w_neg[neg] m times] (cached: the same for every batch of a
        solve; the cache holds the arrays it was built from, so no identity is reused)."""
        key = (len(pos), len(neg), m)
        hit = self._tile_cache.get(key)
        if hit is not None and hit[0] is data and hit[1] is pos and hit[2] is neg:
            return hit[3]
        out = np.concatenate([np.tile(-data.w_pos[pos], m), np.tile(data.w_neg[neg], m)])
        if len(self._tile_cache) > 64:
            self._tile_cache.clear()
        self._tile_cache[key] = (data, pos, neg, out)
        return out

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

    #: coordinate order within the numeric and the 0/1 columns (speed only): "product"
    #: (spread of the value costs x column mass), "spread", "mass" (benchmarks/oracle_branch.py)
    order_rule = "product"

    def _order(self, data: _Data, spread: NDArray[np.float64]) -> NDArray[np.int64]:
        mass = data.absN.sum(axis=0).astype(np.float64)
        key = {"spread": spread, "mass": mass, "product": spread * mass}[self.order_rule]
        # numeric columns first, then the 0/1 columns (each by the key): the cell bound
        # treats the free 0/1 columns of a group as one integer per binary pattern
        return np.lexsort((-key, data.binary)).astype(np.int64)

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
        # the cell bound divides integers |x| <= kmax sum_j |N_gj| in float64: exact below 2^52
        use_cells = bool(data.binary.any()) and (
            int(data.absN.sum(axis=1).max(initial=0)) * kmax + 2 < 2**51)
        if use_cells:
            Rnum = self._radius_tables(data, order, kmax, cap, np.int64, only=~data.binary)
            cell_info = self._cell_tables(data, order, kmax, cap)
            pos_g = np.flatnonzero(data.w_pos > 0)
            neg_g = np.flatnonzero(data.w_neg > 0)
        G, H = self._pert_tables(pert, order, kmax, cap)
        mag = 1.0 + float(np.abs(vc_all).max(axis=1).sum()) + float(np.abs(pert.norm_cost).max())
        exact = ExactObjective(problem, pert)
        tol = exact.tolerance()
        slack = max((d + 8) * _U * mag, tol)
        # keep a node while its bound is <= incumbent + margin: everything that could tie
        # (exactly or within the float band); with no noise F is an integer computed
        # exactly, and only nodes that could beat the incumbent by 1 are kept
        margin = -0.5 if exact.zero_noise else tol
        vals = np.arange(-kmax, kmax + 1, dtype=np.int64)
        sq = vals * vals
        # scores and radii stay below kmax sum_j |N_gj| (and the radii below that + 1):
        # int32 when that fits, which halves the memory traffic of the bound evaluation
        worst = int(data.absN.sum(axis=1).max(initial=0)) * kmax + 2
        dt = np.int32 if worst < 2**31 - 1 else np.int64
        Rt = self._radius_tables(data, order, kmax, cap, dt)
        Nord = data.N[:, order].astype(dt)  # columns in search order
        g = data.N.shape[0]
        const = float(data.const)

        def exact_obj(k_ord: NDArray[np.int64]) -> float:
            k = np.zeros(d, dtype=np.int64)
            k[order] = k_ord
            return float(problem.objective_k(k, pert)[0])

        # incumbents: k = 0 and the perturbation-only minimizer (DP backtrack)
        best_val = v0 = exact_obj(np.zeros(d, dtype=np.int64))
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
        # every evaluated point within 2 tol of the incumbent: (k in search order, value)
        cands: list[tuple[NDArray[np.int64], float]] = [(np.zeros(d, dtype=np.int64), v0),
                                                         (k_p, v)]

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
            alive = lb <= best_val + margin
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
            good = ok & (plb <= best_val + margin)
            bad = ok & ~good
            if bad.any():
                pruned_min = min(pruned_min, float(plb[bad].min()))
            mi, vi = np.nonzero(good)
            if len(mi) == 0:
                continue
            if self.work_limit is not None and nodes + len(mi) > self.work_limit:
                status = OracleStatus.WORK_LIMIT  # this expansion would pass the limit
                pruned_min = min(pruned_min, float(plb[good].min()))
                break
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
                near = obj <= best_val + 2 * tol
                cands.extend((Kc[i].copy(), float(obj[i])) for i in np.flatnonzero(near))
                if len(cands) > 256:
                    cands = [c for c in cands if c[1] <= best_val + 2 * tol]
                rest = obj - slack
                rest[near] = math.inf
                pruned_min = min(pruned_min, float(rest.min(initial=math.inf)))
                continue
            R = Rt(lvl + 1, cap - rcc)
            llb = (np.less_equal(Sc, -R).astype(fdt) @ wp + np.greater_equal(Sc, R).astype(fdt) @ wn)
            llb[~np.isfinite(llb)] = 0.0  # never happens (0/1 times counts); 0 is always valid
            lbc = plb[mi, vi] + llb
            if use_cells and cell_info[lvl + 1] is not None:
                # the cell bound only where the interval bound did not already prune
                o = np.flatnonzero(lbc <= best_val + margin)
                if len(o):
                    cb = self._cell_bound(Sc[o], Rnum(lvl + 1, cap - rcc[o]), cap - rcc[o],
                                          cell_info[lvl + 1], data, pos_g, neg_g)
                    lbc[o] = plb[mi[o], vi[o]] + np.maximum(llb[o], cb)
            keep = lbc <= best_val + margin
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
        decided = False
        near_ties = 1
        if status is OracleStatus.OPTIMAL and exact.zero_noise:
            decided = True  # integer objective: the incumbent's value is the proven minimum
        elif status is OracleStatus.OPTIMAL:
            # every exact minimizer is among the candidates (nothing within tol of the
            # incumbent was pruned): decide between those in the band exactly
            cands = [c for c in cands if c[1] <= best_val + 2 * tol]
            Kc = np.zeros((len(cands), d), dtype=np.int64)
            Kc[:, order] = np.array([c[0] for c in cands], dtype=np.int64)
            i, near_ties = exact.argmin(Kc, np.array([c[1] for c in cands]), tol=tol)
            if i is not None:
                k, decided = Kc[i], True
        return make_result(problem, eta, k, bound, status, time.perf_counter() - t0, self.name,
                           exact=decided, nodes=nodes, level_nodes=level_nodes.tolist(),
                           near_ties=near_ties, work=nodes)
