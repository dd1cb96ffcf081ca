"""Exact weighted oracles (004 Definition 5) as HiGHS MIPs, and a heuristic oracle (Definition 7).

Objective: ``min sum_r w_r q_r`` over the class parameters ``s`` and one binary
``q_r = q_s(z_r)`` per distinct point (identical points are merged first and
their weights summed; zero totals are dropped).  Weights have either sign, so
every linking constraint is written in *both* directions (``q_r`` is forced to
equal the query value, not just bounded on one side):

* monotone conjunctions, ``Z0_r = {j : z_rj = 0}``:
  ``q_r + s_j <= 1`` (j in Z0_r) and ``q_r + sum_{j in Z0_r} s_j >= 1``;
* monotone disjunctions, ``Z1_r = {j : z_rj = 1}``:
  ``q_r >= s_j`` (j in Z1_r) and ``q_r <= sum_{j in Z1_r} s_j``;
* parities: ``sum_{j in Z1_r} s_j = 2 k_r + q_r`` with an integer slack
  ``0 <= k_r <= |Z1_r| / 2`` (exact mod-2 constraint);
* integer halfspaces: scale each point to ``a_r = v_r z_r`` integral
  (:func:`~oracledp.query_classes._halfspaces.integer_scaling`); with
  ``L_r = -B ||a_r||_1`` and ``U_r = B ||a_r||_1``:
  ``<w, a_r> - (v_r - L_r) q_r >= L_r`` (q_r = 1 forces ``<w, a_r> >= v_r``) and
  ``<w, a_r> - (U_r - v_r + 1) q_r <= v_r - 1`` (q_r = 0 forces ``<w, a_r> <= v_r - 1``),
  an exact integer dichotomy;
* monotone decision lists (:class:`~oracledp.query_classes._decision_lists.MonotoneDecisionLists`):
  binaries ``a_j`` (x_j present), ``c_j <= a_j`` (its output bit), ``b`` (default)
  and a linear order of all variables as a tournament ``p_ij + p_ji = 1`` without
  3-cycles (``p_ij + p_jk + p_ki <= 2``).  For each point with on-set ``S_r``, one
  fire indicator ``f_rj`` per ``j in S_r`` and ``f_r0`` (default), ``sum f = 1``,
  ``f_rj <= a_j``, ``f_rj <= p_jk + 1 - a_k`` (k in S_r, k != j),
  ``f_r0 + a_j <= 1`` (j in S_r): the only feasible choice is the first present
  on-variable, else the default.  Then ``|q_r - c_j| <= 1 - f_rj`` and
  ``|q_r - b| <= 1 - f_r0``.  The solution is mapped to the canonical block row in
  post-processing (consecutive equal bits merged, trailing rules equal to the
  default dropped), which computes the same function.

Solver settings follow the spec (section 1, "Exactness"): ``mip_rel_gap = 0``,
``mip_abs_gap = 1e-9``.  A solver's float "optimal" is not yet the exact argmin
(:mod:`oracledp.query_classes._base`, "Exactness"): HiGHS may discard points up to its MIP
feasibility tolerance (1e-6) below an incumbent.  So, unless the weights are integers
(every float objective exact), the oracle asks a second question, the *tie check*: with
no-good rows excluding the query patterns found so far and an objective bound of the
best float value plus three times the float band plus a window of
:data:`_HIGHS_TIE_WINDOW`, is there another feasible point?  "No" rests on the same
trust in the solver as its optimality proof; a point found joins the candidates and the
question is asked again (at most :data:`_TIE_MAX_SOLVES` times, then refused); binary
parameters are excluded directly, other classes by their pattern on the points.  Where
``class size x points`` is at most ``enumerate_limit`` (public sizes), the exact argmin
is computed by enumeration instead, which needs no trust in the solver
(``info["certificate"]`` says which).  The
candidates are compared exactly (:func:`~oracledp.query_classes._base.exact_class_argmin`),
lexicographically smallest parameter row first.  A time limit, in the first solve or in
the tie check, yields an uncertified result.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from oracledp.oracles._base import OracleStatus
from oracledp.oracles._highs import new_highs
from oracledp.query_classes._base import (
    BruteForceClassOracle,
    ClassOracleResult,
    QueryClass,
    WeightedOracle,
    _DerivedClass,
    aggregate_points,
    check_weighted_points,
    class_band,
    exact_class_argmin,
    finish_result,
)
from oracledp.query_classes._boolean import MonotoneConjunctions, MonotoneDisjunctions, Parities
from oracledp.query_classes._decision_lists import MonotoneDecisionLists
from oracledp.query_classes._halfspaces import IntegerHalfspaces, integer_scaling

__all__ = ["HighsClassOracle", "LocalSearchClassOracle", "make_class_oracle"]

# HiGHS may discard points up to its MIP feasibility tolerance (1e-6, absolute for a
# non-integral objective) below an incumbent or objective bound: the tie check asks about
# a window ten times wider (the same constant as the halfspace MIP oracle)
_HIGHS_TIE_WINDOW = 1e-5
_TIE_MAX_SOLVES = 8  # further solves of the tie check before refusing


class _Model:
    """Column/row accumulator for one HiGHS model."""

    def __init__(self) -> None:
        self.lb: list[NDArray[np.float64]] = []
        self.ub: list[NDArray[np.float64]] = []
        self.n = 0
        self.rows: list[tuple[NDArray[np.int64], NDArray[np.float64],
                              NDArray[np.float64], NDArray[np.float64]]] = []

    def cols(self, k: int, lb: ArrayLike, ub: ArrayLike) -> NDArray[np.int64]:
        out = np.arange(self.n, self.n + k, dtype=np.int64)
        self.lb.append(np.broadcast_to(np.asarray(lb, dtype=np.float64), (k,)).copy())
        self.ub.append(np.broadcast_to(np.asarray(ub, dtype=np.float64), (k,)).copy())
        self.n += k
        return out

    def rows_dense(self, idx: NDArray[np.int64], val: NDArray[np.float64], lo: ArrayLike,
                   hi: ArrayLike) -> None:
        """Rows given as (R, W) index/coefficient matrices; zero coefficients are dropped."""
        R = idx.shape[0]
        if R == 0:
            return
        self.rows.append((idx, val, np.broadcast_to(np.asarray(lo, float), (R,)).copy(),
                          np.broadcast_to(np.asarray(hi, float), (R,)).copy()))

    def build(self, cost: NDArray[np.float64], cost_cols: NDArray[np.int64], *,
              time_limit: float, threads: int, verbose: bool) -> Any:
        import highspy

        h = new_highs(verbose)
        h.setOptionValue("mip_rel_gap", 0.0)
        h.setOptionValue("mip_abs_gap", 1e-9)
        h.setOptionValue("time_limit", float(time_limit))
        if threads > 0:
            h.setOptionValue("threads", int(threads))
        h.addVars(self.n, np.concatenate(self.lb), np.concatenate(self.ub))
        h.changeColsIntegrality(self.n, np.arange(self.n, dtype=np.int32),
                                np.full(self.n, highspy.HighsVarType.kInteger))
        for idx, val, lo, hi in self.rows:
            mask = val != 0
            counts = mask.sum(axis=1)
            starts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int32)
            index = idx[mask].astype(np.int32)
            h.addRows(len(lo), lo, hi, len(index), starts, index, val[mask].astype(np.float64))
        h.changeColsCost(len(cost_cols), cost_cols.astype(np.int32), cost.astype(np.float64))
        return h


def _link_boolean(model: _Model, cls: QueryClass, Z: NDArray[np.float64], s: NDArray[np.int64],
                  q: NDArray[np.int64]) -> None:
    k, p = Z.shape
    Zi = Z.astype(np.int64)
    if isinstance(cls, Parities):
        kcol = model.cols(k, 0.0, Zi.sum(axis=1) // 2)
        idx = np.hstack([np.broadcast_to(s, (k, p)), q[:, None], kcol[:, None]])
        val = np.hstack([Zi.astype(float), -np.ones((k, 1)), -2.0 * np.ones((k, 1))])
        model.rows_dense(idx, val, 0.0, 0.0)
        return
    conj = isinstance(cls, MonotoneConjunctions)  # includes conjunctions of literals
    M = (Zi == 0) if conj else (Zi == 1)  # the coordinates that decide q_r
    rr, jj = np.nonzero(M)
    pair_idx = np.column_stack([q[rr], s[jj]])
    if conj:  # q_r + s_j <= 1
        model.rows_dense(pair_idx, np.ones((len(rr), 2)), -np.inf, 1.0)
    else:  # q_r - s_j >= 0
        model.rows_dense(pair_idx, np.tile([1.0, -1.0], (len(rr), 1)), 0.0, np.inf)
    idx = np.hstack([q[:, None], np.broadcast_to(s, (k, p))])
    if conj:  # q_r + sum_{Z0} s_j >= 1
        model.rows_dense(idx, np.hstack([np.ones((k, 1)), M.astype(float)]), 1.0, np.inf)
    else:  # q_r - sum_{Z1} s_j <= 0
        model.rows_dense(idx, np.hstack([np.ones((k, 1)), -M.astype(float)]), -np.inf, 0.0)


def _link_halfspace(model: _Model, cls: IntegerHalfspaces, Z: NDArray[np.float64],
                    s: NDArray[np.int64], q: NDArray[np.int64]) -> None:
    k, p = Z.shape
    A, v = integer_scaling(Z, cls.max_denominator)
    l1 = np.abs(A).sum(axis=1)
    L = -cls.B * l1
    U = cls.B * l1
    idx = np.hstack([np.broadcast_to(s, (k, p)), q[:, None]])
    Af = A.astype(np.float64)
    model.rows_dense(idx, np.hstack([Af, -(v - L).astype(float)[:, None]]), L.astype(float),
                     np.inf)
    model.rows_dense(idx, np.hstack([Af, -(U - v + 1).astype(float)[:, None]]), -np.inf,
                     (v - 1).astype(float))


class _DecisionListModel:
    """Columns of the decision-list formulation (see module docstring) and the decoder."""

    def __init__(self, model: _Model, d: int, Z: NDArray[np.float64],
                 q: NDArray[np.int64]) -> None:
        self.d = d
        self.a = model.cols(d, 0.0, 1.0)
        self.c = model.cols(d, 0.0, 1.0)
        self.b = int(model.cols(1, 0.0, 1.0)[0])
        self.p = np.full((d, d), -1, dtype=np.int64)
        pairs = [(i, j) for i in range(d) for j in range(d) if i != j]
        if pairs:
            cols = model.cols(len(pairs), 0.0, 1.0)
            for (i, j), col in zip(pairs, cols, strict=True):
                self.p[i, j] = col
        a, c, b, p = self.a, self.c, self.b, self.p
        # c_j <= a_j (an absent variable's bit is irrelevant: fix it to 0)
        model.rows_dense(np.column_stack([c, a]), np.tile([1.0, -1.0], (d, 1)), -np.inf, 0.0)
        # tournament: p_ij + p_ji = 1; no 3-cycles: p_ij + p_jk + p_ki <= 2
        iu, ju = np.triu_indices(d, 1)
        model.rows_dense(np.column_stack([p[iu, ju], p[ju, iu]]), np.ones((len(iu), 2)),
                         1.0, 1.0)
        tri = [(i, j, k) for i in range(d) for j in range(i + 1, d) for k in range(j + 1, d)]
        if tri:
            T = np.array(tri, dtype=np.int64)
            i, j, k = T[:, 0], T[:, 1], T[:, 2]
            ones = np.ones((len(T), 3))
            model.rows_dense(np.column_stack([p[i, j], p[j, k], p[k, i]]), ones, -np.inf, 2.0)
            model.rows_dense(np.column_stack([p[i, k], p[k, j], p[j, i]]), ones, -np.inf, 2.0)
        # per point: fire indicators and the link to q_r
        sum_rows: list[list[int]] = []
        pair_rows: list[tuple[int, int]] = []  # f - a <= 0  /  f + a <= 1 (default)
        def_rows: list[tuple[int, int]] = []
        prec_rows: list[tuple[int, int, int]] = []  # f - p_jk + a_k <= 1
        link: list[tuple[int, int, int]] = []  # (q, bit column, f): |q - bit| <= 1 - f
        for r in range(Z.shape[0]):
            S = np.flatnonzero(Z[r] != 0)
            f = model.cols(len(S) + 1, 0.0, 1.0)
            f0 = int(f[-1])
            sum_rows.append([int(x) for x in f])
            link.append((int(q[r]), b, f0))
            for t, j in enumerate(S):
                fj = int(f[t])
                pair_rows.append((fj, int(a[j])))
                def_rows.append((f0, int(a[j])))
                link.append((int(q[r]), int(c[j]), fj))
                for k in S:
                    if k != j:
                        prec_rows.append((fj, int(p[j, k]), int(a[k])))
        # sum f = 1 (rows padded to width d + 1 with zero coefficients, which are dropped)
        SI = np.zeros((len(sum_rows), d + 1), dtype=np.int64)
        SV = np.zeros((len(sum_rows), d + 1))
        for r, row in enumerate(sum_rows):
            SI[r, :len(row)] = row
            SV[r, :len(row)] = 1.0
        model.rows_dense(SI, SV, 1.0, 1.0)
        if pair_rows:
            model.rows_dense(np.array(pair_rows, dtype=np.int64),
                             np.tile([1.0, -1.0], (len(pair_rows), 1)), -np.inf, 0.0)
            model.rows_dense(np.array(def_rows, dtype=np.int64),
                             np.ones((len(def_rows), 2)), -np.inf, 1.0)
        if prec_rows:
            model.rows_dense(np.array(prec_rows, dtype=np.int64),
                             np.tile([1.0, -1.0, 1.0], (len(prec_rows), 1)), -np.inf, 1.0)
        L = np.array(link, dtype=np.int64)
        # q - bit + f <= 1  and  bit - q + f <= 1
        model.rows_dense(L, np.tile([1.0, -1.0, 1.0], (len(L), 1)), -np.inf, 1.0)
        model.rows_dense(L, np.tile([-1.0, 1.0, 1.0], (len(L), 1)), -np.inf, 1.0)

    def decode(self, x: NDArray[np.float64]) -> NDArray[np.int64]:
        """Canonical row (r_1..r_d, b) of the list encoded by the MIP solution ``x``."""
        d = self.d
        present = [j for j in range(d) if x[self.a[j]] > 0.5]
        b = int(x[self.b] > 0.5)
        # position of j = number of variables preceding it (a linear order)
        pos = {j: sum(1 for i in range(d) if i != j and x[self.p[i, j]] > 0.5) for j in present}
        order = sorted(present, key=lambda j: pos[j])
        blocks: list[tuple[list[int], int]] = []
        for j in order:
            bit = int(x[self.c[j]] > 0.5)
            if blocks and blocks[-1][1] == bit:
                blocks[-1][0].append(j)
            else:
                blocks.append(([j], bit))
        if blocks and blocks[-1][1] == b:  # bits alternate, so at most one block drops
            blocks.pop()
        row = np.zeros(d + 1, dtype=np.int64)
        for t, (variables, _bit) in enumerate(blocks, start=1):
            row[variables] = t
        row[d] = b
        return row


_SUPPORTED = (MonotoneConjunctions, MonotoneDisjunctions, Parities, IntegerHalfspaces,
              MonotoneDecisionLists)
_LOCAL_SEARCH_SUPPORTED = (MonotoneConjunctions, MonotoneDisjunctions, Parities,
                           IntegerHalfspaces)


class HighsClassOracle:
    """Exact weighted oracle over a boolean or halfspace class (HiGHS MIP, see module docstring).

    Parameters
    ----------
    query_class:
        A :class:`MonotoneConjunctions` (or :class:`ConjunctionsOfLiterals`),
        :class:`MonotoneDisjunctions`, :class:`Parities` or
        :class:`IntegerHalfspaces` or :class:`MonotoneDecisionLists`.  Use :func:`make_class_oracle` for negated
        and 0/1-loss classes.
    time_limit:
        Seconds per solve; on expiry the result is not certified.
    threads:
        HiGHS threads (1: deterministic).
    enumerate_limit:
        When ``class size x points`` is at most this (public sizes only), a solver's
        optimum is made exact by enumerating the class (no trust in the solver);
        otherwise by the tie check.  0 always uses the tie check.
    """

    name = "highs-class"
    certifiable = True

    def __init__(self, query_class: QueryClass, *, time_limit: float = 60.0, threads: int = 1,
                 verbose: bool = False, enumerate_limit: int = 1 << 24) -> None:
        if not isinstance(query_class, _SUPPORTED):
            raise TypeError(
                f"no MIP formulation for {type(query_class).__name__}; supported: "
                + ", ".join(c.__name__ for c in _SUPPORTED)
            )
        if not (time_limit > 0):
            raise ValueError(f"time_limit must be > 0, got {time_limit!r}")
        self.query_class = query_class
        self.time_limit = float(time_limit)
        self.threads = int(threads)
        self.verbose = verbose
        self.enumerate_limit = int(enumerate_limit)

    def solve(self, points: ArrayLike, weights: ArrayLike) -> ClassOracleResult:
        """Minimize ``sum_r w_r q(z_r)``; certified only on an exact decision (module
        docstring: the solver's optimum, made exact by the tie check)."""
        import highspy

        t0 = time.perf_counter()
        cls = self.query_class
        Z0, w0 = check_weighted_points(cls, points, weights)
        Z, w = aggregate_points(Z0, w0)
        if Z.shape[0] == 0:  # objective identically 0
            p0 = np.zeros(cls.param_dim, dtype=np.int64)
            return finish_result(cls, Z, w, p0, 0.0, OracleStatus.OPTIMAL,
                                 time.perf_counter() - t0, self.name)
        model = _Model()
        dl: _DecisionListModel | None = None
        if isinstance(cls, MonotoneDecisionLists):
            s = np.zeros(0, dtype=np.int64)
            q = model.cols(Z.shape[0], 0.0, 1.0)
            dl = _DecisionListModel(model, cls.d, Z, q)
        elif isinstance(cls, IntegerHalfspaces):
            s = model.cols(cls.d, -cls.B, cls.B)
            q = model.cols(Z.shape[0], 0.0, 1.0)
            _link_halfspace(model, cls, Z, s, q)
        else:
            s = model.cols(cls.param_dim, 0.0, 1.0)
            q = model.cols(Z.shape[0], 0.0, 1.0)
            _link_boolean(model, cls, Z, s, q)
        h = model.build(w, q, time_limit=self.time_limit, threads=self.threads,
                        verbose=self.verbose)

        def run() -> tuple[Any, NDArray[np.int64] | None]:
            h.run()
            sol = h.getSolution()
            if not sol.value_valid:
                return h.getModelStatus(), None
            x = np.asarray(sol.col_value, dtype=np.float64)
            return h.getModelStatus(), (dl.decode(x) if dl is not None
                                        else np.rint(x[s]).astype(np.int64))

        st, params = run()
        info = h.getInfo()
        status = {
            highspy.HighsModelStatus.kOptimal: OracleStatus.OPTIMAL,
            highspy.HighsModelStatus.kTimeLimit: OracleStatus.TIME_LIMIT,
            highspy.HighsModelStatus.kInfeasible: OracleStatus.INFEASIBLE,
        }.get(st, OracleStatus.ERROR)
        bound = float(info.mip_dual_bound)
        if not np.isfinite(bound):
            bound = -np.inf
        extra: dict[str, Any] = {}
        exact = False
        if status is OracleStatus.OPTIMAL and params is not None:
            if cls.size * (len(w0) + len(w)) <= self.enumerate_limit:
                params, exact, extra = self._enumeration(Z, w, Z0, w0, params)
            else:
                # binary parameters: exclude them directly (a sparse row); otherwise exclude
                # the query pattern on the merged points
                nogood_cols = s if (len(s) and not isinstance(cls, IntegerHalfspaces)) else None
                params, exact, extra = self._tie_check(h, run, q, nogood_cols, Z, w, Z0, w0,
                                                       params, t0)
        return finish_result(cls, Z, w, params, bound, status, time.perf_counter() - t0,
                             self.name, exact=exact, model_status=str(st),
                             n_points=int(Z.shape[0]), **extra)

    def _enumeration(self, Z: NDArray[np.float64], w: NDArray[np.float64],
                     Z0: NDArray[np.float64], w0: NDArray[np.float64], params: NDArray[np.int64]
                     ) -> tuple[NDArray[np.int64], bool, dict[str, Any]]:
        """The exact argmin by enumerating the class (no trust in the solver): float values,
        the candidates within twice the band compared exactly, ties to the first row."""
        cls = self.query_class
        P = cls.enumerate(self.enumerate_limit)
        vals = cls._evaluate(P, Z).astype(np.float64) @ w
        tol = class_band(len(w0) + len(w), w0)
        near = np.flatnonzero(vals <= vals.min() + 2.0 * tol)
        # integer weights (tol = 0): the float values are exact, ties are exact ties
        best = P[int(near[0] if tol == 0.0 else near[exact_class_argmin(cls, Z0, w0, P[near])])]
        mine = cls.check_params(np.asarray(params, dtype=np.int64))[0]
        return best, True, {"certificate": "enumeration", "near_ties": len(near),
                            "solver_point_rejected": not np.array_equal(best, mine)}

    def _tie_check(self, h: Any, run: Any, q: NDArray[np.int64],
                   nogood_cols: NDArray[np.int64] | None, Z: NDArray[np.float64],
                   w: NDArray[np.float64], Z0: NDArray[np.float64], w0: NDArray[np.float64],
                   params: NDArray[np.int64], t0: float
                   ) -> tuple[NDArray[np.int64], bool, dict[str, Any]]:
        """Make the solver's optimum exact (module docstring): returns the exact argmin
        among the candidates, whether the decision is exact, and what it did."""
        import highspy

        cls = self.query_class
        tol = class_band(len(w0) + len(w), w0)
        if tol == 0.0:  # integer weights: float objectives are exact, the optimum too
            return params, True, {"certificate": "solver", "tie_solves": 0}
        P = cls.check_params(np.asarray(params, dtype=np.int64))
        cands = [P[0]]
        vals = [float(cls._evaluate(P, Z)[0].astype(np.float64) @ w)]
        n_rows = h.getNumRow()
        solves = 0
        settled = False
        try:
            while solves < _TIE_MAX_SOLVES:
                left = self.time_limit - (time.perf_counter() - t0)
                if left <= 0:
                    break
                solves += 1
                # no-good row for the newest candidate: its binary parameters, or its
                # pattern on the merged points
                if nogood_cols is not None:
                    cols, on = nogood_cols, cands[-1].astype(bool)
                else:
                    cols, on = q, cls._evaluate(cands[-1][None, :], Z)[0].astype(bool)
                h.addRow(1.0 - float(on.sum()), highspy.kHighsInf, len(cols),
                         cols.astype(np.int32), np.where(on, -1.0, 1.0))
                h.setOptionValue("objective_bound", min(vals) + 3.0 * tol + _HIGHS_TIE_WINDOW)
                h.setOptionValue("time_limit", max(left, 1e-3))
                st, p2 = run()
                if st in (highspy.HighsModelStatus.kInfeasible,
                          highspy.HighsModelStatus.kObjectiveBound):
                    settled = True  # no other pattern below the bound (minus the window)
                    break
                if st != highspy.HighsModelStatus.kOptimal or p2 is None:
                    break  # time limit or failure: undecided
                P2 = cls.check_params(np.asarray(p2, dtype=np.int64))
                pat2 = cls._evaluate(P2, Z)[0]
                if any(np.array_equal(P2[0], c) for c in cands) or (
                        nogood_cols is None
                        and any(np.array_equal(pat2, cls._evaluate(c[None, :], Z)[0])
                                for c in cands)):
                    break  # the solver broke a no-good row: refuse
                f = float(pat2.astype(np.float64) @ w)
                if f >= min(vals) + 3.0 * tol + _HIGHS_TIE_WINDOW:
                    settled = True
                    break
                cands.append(P2[0])
                vals.append(f)
        finally:
            h.deleteRows(h.getNumRow() - n_rows,
                         np.arange(n_rows, h.getNumRow(), dtype=np.int32))
            h.setOptionValue("objective_bound", highspy.kHighsInf)
            h.setOptionValue("time_limit", float(self.time_limit))
        extra: dict[str, Any] = {"certificate": "solver tie check", "tie_solves": solves}
        if not settled:
            extra["reason"] = "the check for near-tied points did not finish"
            return cands[0], False, extra
        v = np.asarray(vals)
        near = [i for i in range(len(cands)) if v[i] <= v.min() + 2.0 * tol]
        order = sorted(near, key=lambda i: tuple(int(x) for x in cands[i]))
        K = np.array([cands[i] for i in order], dtype=np.int64)
        best = K[exact_class_argmin(cls, Z0, w0, K)]
        extra["near_ties"] = len(near)
        return best, True, extra


class LocalSearchClassOracle:
    """A heuristic weighted oracle (004 Definition 7): coordinate descent from ``s = 0``.

    Deterministic, never certified (``certifiable = False``): mechanisms whose
    privacy needs an exact oracle refuse it unless wrapped in PRSMA.
    """

    name = "local-search"
    certifiable = False

    def __init__(self, query_class: QueryClass, *, max_sweeps: int = 20) -> None:
        if not isinstance(query_class, _LOCAL_SEARCH_SUPPORTED):
            raise TypeError(f"no local search for {type(query_class).__name__}")
        self.query_class = query_class
        self.max_sweeps = int(max_sweeps)

    def solve(self, points: ArrayLike, weights: ArrayLike) -> ClassOracleResult:
        t0 = time.perf_counter()
        cls = self.query_class
        Z, w = aggregate_points(*check_weighted_points(cls, points, weights))
        lo, hi = ((-cls.B, cls.B) if isinstance(cls, IntegerHalfspaces) else (0, 1))
        vals = np.arange(lo, hi + 1)
        cur = np.zeros(cls.param_dim, dtype=np.int64)

        def f(P: NDArray[np.int64]) -> NDArray[np.float64]:
            if Z.shape[0] == 0:
                return np.zeros(len(P))
            return cls._evaluate(P, Z).astype(np.float64) @ w

        best = float(f(cur[None, :])[0])
        for _ in range(self.max_sweeps):
            improved = False
            for j in range(cls.param_dim):
                cand = np.repeat(cur[None, :], len(vals), axis=0)
                cand[:, j] = vals
                fv = f(cand)
                i = int(np.argmin(fv))
                if fv[i] < best - 1e-12:
                    best, cur, improved = float(fv[i]), cand[i].copy(), True
            if not improved:
                break
        return finish_result(cls, Z, w, cur, -np.inf, OracleStatus.GAP,
                             time.perf_counter() - t0, self.name)


def make_class_oracle(query_class: QueryClass, kind: str = "highs", **options: Any
                      ) -> WeightedOracle:
    """A weighted oracle for ``query_class``: ``"highs"`` (exact MIP), ``"brute"``
    (enumeration) or ``"local-search"`` (heuristic).  Negated and 0/1-loss classes
    are reduced to their base class (spec section 1 and 2(d))."""
    if kind not in ("highs", "brute", "local-search"):
        raise ValueError(f"unknown oracle kind {kind!r}; valid: brute, highs, local-search")
    if isinstance(query_class, _DerivedClass):  # negated, 0/1 loss: reduced to the base class
        return query_class.reduced_oracle(make_class_oracle(query_class.base, kind, **options))
    if kind == "brute":
        return BruteForceClassOracle(query_class, **options)
    if kind == "local-search":
        return LocalSearchClassOracle(query_class, **options)
    return HighsClassOracle(query_class, **options)
