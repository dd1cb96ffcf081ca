"""HiGHS model of the monolithic MIP (big-M rows), and HiGHS's well-scaling rule.

Private helper of :mod:`oracledp.oracles._monolithic`, whose module docstring states the
formulation, the well-scaling rule ``t (1 + L) <= 1/2`` under which HiGHS's bound is
trusted, and the tie check that makes a trusted optimum exact.  Holds
:class:`_HighsModel` (built once per problem; a new ``eta`` only changes objective
coefficients, warm-started from the previous optimum; no-good rows and an objective
bound for the tie check) and :func:`highs_scale_trusted_by_schema` (the same rule
decided from a declared schema, public facts only).  highspy is imported only inside
:class:`_HighsModel` (it may not share a process with OR-Tools, see
:mod:`oracledp.oracles._monolithic`).
"""

from __future__ import annotations

import math
import threading
import time
from typing import Any

import numpy as np
from numpy.typing import NDArray

from oracledp.oracles._base import OracleStatus
from oracledp.oracles._halfspace import HalfspaceProblem
from oracledp.oracles._highs import new_highs
from oracledp.oracles._mono_structure import _Raw, _Structure

_HIGHS_ABS_GAP = 1e-9
_HIGHS_MIP_FEAS_TOL = 1e-6  # integrality, column bounds and rows in the MIP search
_HIGHS_PRIMAL_FEAS_TOL = 1e-7  # LP relaxations
_HIGHS_TOL = max(_HIGHS_MIP_FEAS_TOL, _HIGHS_PRIMAL_FEAS_TOL)
_HIGHS_SCHEDULER_LOCK = threading.Lock()


# --------------------------------------------------------------------------------------------
# HiGHS
# --------------------------------------------------------------------------------------------
def _coo_to_csr(
    n_rows: int, rows: NDArray[np.int64], cols: NDArray[np.int64], vals: NDArray[np.float64]
) -> tuple[NDArray[np.int32], NDArray[np.int32], NDArray[np.float64]]:
    order = np.lexsort((cols, rows))
    start = np.zeros(n_rows, dtype=np.int32)
    start[1:] = np.cumsum(np.bincount(rows, minlength=n_rows))[:-1]
    return start, cols[order].astype(np.int32), vals[order].astype(np.float64)


def highs_scale_trusted_by_schema(problem: HalfspaceProblem) -> bool | None:
    """Whether every table admitted by the problem's schema passes the well-scaling rule.

    An upper bound on the largest row l1 norm of the HiGHS model, from the schema and the
    space alone: a big-M row has sum_j |N_gj| + 1 + M_g <= S (1 + k_max) + 1 with
    S = sum_j floor(Q b_j); the norm row has sum_j sum_a a^2 + sum_v v.  None without a
    schema or without declared bounds (then only the data can tell).
    """
    schema = getattr(problem, "schema", None)
    if schema is None or not schema.bounds_declared:
        return None
    sp = problem.space
    Q = schema.Q
    S = sum(math.floor(b * Q) for b in schema.bounds)
    km = sp.k_max
    norm_row = sp.d * km * (km + 1) * (2 * km + 1) // 3 + sp.k_norm2_max * (sp.k_norm2_max + 1) // 2
    L = max(S * (1 + km) + 1, norm_row)
    return _HIGHS_TOL * (1.0 + L) <= 0.5


class _HighsModel:
    def __init__(self, st: _Structure, time_limit: float, threads: int, verbose: bool) -> None:
        import highspy

        self._hs = highspy
        self.st = st
        self.time_limit = float(time_limit)
        d, vals = st.d, st.values
        nv, nu, na, nb = len(vals), len(st.norms), len(st.pos), len(st.neg)
        # column layout: k | z (d x nv, row-major) | u | a | b
        self.k_cols = np.arange(d, dtype=np.int32)
        z0 = d
        u0 = z0 + d * nv
        a0 = u0 + nu
        b0 = a0 + na
        n_cols = b0 + nb
        self.u_cols = np.arange(u0, a0, dtype=np.int32)
        lower = np.zeros(n_cols)
        upper = np.ones(n_cols)
        lower[:d], upper[:d] = -st.k_max, st.k_max
        cost = np.zeros(n_cols)
        cost[a0:b0] = -st.n_pos[st.pos]
        cost[b0:] = -st.n_neg[st.neg]

        rows: list[NDArray[np.int64]] = []
        cols: list[NDArray[np.int64]] = []
        coef: list[NDArray[np.float64]] = []
        row_lo: list[NDArray[np.float64]] = []
        row_hi: list[NDArray[np.float64]] = []
        r = 0

        def add(rr: NDArray, cc: NDArray, vv: NDArray) -> None:
            rows.append(np.asarray(rr, dtype=np.int64))
            cols.append(np.asarray(cc, dtype=np.int64))
            coef.append(np.asarray(vv, dtype=np.float64))

        zc = z0 + np.arange(d * nv).reshape(d, nv)
        self.z_cols = zc
        jj = np.repeat(np.arange(d), nv)
        # sum_a z_{j,a} <= 1
        add(r + jj, zc.ravel(), np.ones(d * nv))
        row_lo.append(np.full(d, -np.inf))
        row_hi.append(np.ones(d))
        r += d
        # k_j - sum_a a z_{j,a} = 0
        add(r + np.arange(d), np.arange(d), np.ones(d))
        add(r + jj, zc.ravel(), -np.tile(vals, d).astype(np.float64))
        row_lo.append(np.zeros(d))
        row_hi.append(np.zeros(d))
        r += d
        # sum_v u_v = 1
        add(np.full(nu, r), self.u_cols, np.ones(nu))
        row_lo.append(np.ones(1))
        row_hi.append(np.ones(1))
        r += 1
        # sum a^2 z - sum v u_v = 0
        add(np.full(d * nv, r), zc.ravel(), np.tile(vals**2, d).astype(np.float64))
        add(np.full(nu, r), self.u_cols, -st.norms.astype(np.float64))
        row_lo.append(np.zeros(1))
        row_hi.append(np.zeros(1))
        r += 1
        # big-M rows: S_g - (1 + M) a_g >= -M  and  S_g + (1 + M) b_g <= M
        for grp, col0, sign in ((st.pos, a0, -1.0), (st.neg, b0, 1.0)):
            if len(grp) == 0:
                continue
            A = st.N[grp]
            gi, gj = np.nonzero(A)
            add(r + gi, gj, A[gi, gj].astype(np.float64))
            M = st.M[grp].astype(np.float64)
            add(r + np.arange(len(grp)), col0 + np.arange(len(grp)), sign * (1.0 + M))
            if sign < 0:
                row_lo.append(-M)
                row_hi.append(np.full(len(grp), np.inf))
            else:
                row_lo.append(np.full(len(grp), -np.inf))
                row_hi.append(M)
            r += len(grp)
        # a_g + b_g <= 1 for groups with both labels
        both, ia, ib = np.intersect1d(st.pos, st.neg, assume_unique=True, return_indices=True)
        if len(both):
            add(r + np.arange(len(both)), a0 + ia, np.ones(len(both)))
            add(r + np.arange(len(both)), b0 + ib, np.ones(len(both)))
            row_lo.append(np.full(len(both), -np.inf))
            row_hi.append(np.ones(len(both)))
            r += len(both)

        all_rows, all_coef = np.concatenate(rows), np.concatenate(coef)
        # The well-scaling rule of the monolithic module docstring: t (1 + max_r ||A_r||_1) <= 1/2.
        row_l1 = np.bincount(all_rows, weights=np.abs(all_coef), minlength=r)
        self.bound_trusted = bool(_HIGHS_TOL * (1.0 + float(row_l1.max(initial=0.0))) <= 0.5)

        h = new_highs(verbose)
        options: dict[str, Any] = {
            "output_flag": bool(verbose),
            "mip_rel_gap": 0.0,
            "mip_abs_gap": _HIGHS_ABS_GAP,
            "mip_feasibility_tolerance": _HIGHS_MIP_FEAS_TOL,
            "primal_feasibility_tolerance": _HIGHS_PRIMAL_FEAS_TOL,
            "time_limit": float(time_limit),
            "threads": int(threads),
        }
        for key, value in options.items():
            if h.setOptionValue(key, value) != highspy.HighsStatus.kOk:
                raise RuntimeError(f"HiGHS rejected option {key} = {value!r}")
        h.addVars(n_cols, lower, upper)
        h.changeColsCost(n_cols, np.arange(n_cols, dtype=np.int32), cost)
        h.changeColsIntegrality(
            n_cols,
            np.arange(n_cols, dtype=np.int32),
            np.full(n_cols, int(highspy.HighsVarType.kInteger), dtype=np.uint8),
        )
        h.changeObjectiveOffset(float(st.n_total))
        start, idx, val = _coo_to_csr(r, all_rows, np.concatenate(cols), all_coef)
        h.addRows(r, np.concatenate(row_lo), np.concatenate(row_hi), len(idx), start, idx, val)
        self.h = h
        self.n_cols = n_cols
        # start from k = 0 (always in W): all z, a, b = 0 and u at norm 0
        x0 = np.zeros(n_cols)
        x0[u0] = 1.0
        self.start = x0
        self.shape = {"columns": n_cols, "rows": r, "nonzeros": len(idx)}

    def _no_good(self, k: NDArray[np.int64]) -> tuple[NDArray[np.int32], NDArray[np.float64], float]:
        """Row excluding the point k: sum_{k_j = 0} sum_a z_{j,a} - sum_{k_j != 0} z_{j,k_j}
        >= 1 - #{k_j != 0} (integer coefficients; every other integer point satisfies it)."""
        vals = self.st.values
        idx: list[int] = []
        coef: list[float] = []
        for j, kj in enumerate(np.asarray(k, dtype=np.int64)):
            if kj == 0:
                idx += self.z_cols[j].tolist()
                coef += [1.0] * len(vals)
            else:
                idx.append(int(self.z_cols[j, int(np.flatnonzero(vals == kj)[0])]))
                coef.append(-1.0)
        return (np.array(idx, dtype=np.int32), np.array(coef),
                1.0 - float(np.count_nonzero(k)))

    def solve(self, eta: NDArray[np.float64], exclude: list[NDArray[np.int64]] | None = None,
              cutoff: float = math.inf, time_limit: float | None = None) -> _Raw:
        """Solve for eta; ``exclude``: points to cut off (no-good rows, removed afterwards),
        ``cutoff``: objective bound (HiGHS prunes every node whose bound is above it)."""
        hs, h = self._hs, self.h
        exclude = exclude or []
        n_rows = h.getNumRow()
        for k in exclude:
            idx, coef, lo = self._no_good(k)
            h.addRow(lo, hs.kHighsInf, len(idx), idx, coef)
        if math.isfinite(cutoff):
            h.setOptionValue("objective_bound", float(cutoff))
        if time_limit is not None:
            h.setOptionValue("time_limit", max(float(time_limit), 1e-3))
        try:
            return self._solve(eta)
        finally:
            if exclude:
                h.deleteRows(len(exclude), np.arange(n_rows, n_rows + len(exclude), dtype=np.int32))
            if math.isfinite(cutoff):
                h.setOptionValue("objective_bound", hs.kHighsInf)
            if time_limit is not None:
                h.setOptionValue("time_limit", float(self.time_limit))

    def _solve(self, eta: NDArray[np.float64]) -> _Raw:
        hs, h, st = self._hs, self.h, self.st
        c_k, c_u = st.costs(eta)
        h.changeColsCost(st.d, self.k_cols, c_k)
        h.changeColsCost(len(self.u_cols), self.u_cols, c_u)
        sol = hs.HighsSolution()
        sol.col_value = self.start.tolist()
        sol.value_valid = True
        h.setSolution(sol)
        t = time.perf_counter()
        run_status = h.run()
        ms = h.getModelStatus()
        reset = False
        if run_status == hs.HighsStatus.kError and ms == hs.HighsModelStatus.kNotset:
            # HiGHS keeps one global task scheduler, sized by the first solve in the process;
            # a later solve asking for another thread count fails at once.  Rebuild it, once.
            with _HIGHS_SCHEDULER_LOCK:
                hs.Highs.resetGlobalScheduler(True)
                reset = True
                h.setSolution(sol)
                run_status = h.run()
            ms = h.getModelStatus()
        solve_s = time.perf_counter() - t
        info = h.getInfo()
        status = {
            hs.HighsModelStatus.kOptimal: OracleStatus.OPTIMAL,
            hs.HighsModelStatus.kTimeLimit: OracleStatus.TIME_LIMIT,
            hs.HighsModelStatus.kInfeasible: OracleStatus.INFEASIBLE,
            # with an objective bound: nothing below it (only asked in the tie check)
            hs.HighsModelStatus.kObjectiveBound: OracleStatus.INFEASIBLE,
        }.get(ms, OracleStatus.ERROR)
        k = None
        if info.primal_solution_status == 2:  # kSolutionStatusFeasible
            x = np.asarray(h.getSolution().col_value, dtype=np.float64)
            if x.shape == (self.n_cols,) and np.isfinite(x).all():
                k = np.rint(x[: st.d]).astype(np.int64)
                self.start = np.rint(x)  # warm start for the next eta (feasible for any eta)
        bound = float(info.mip_dual_bound)
        if status is OracleStatus.INFEASIBLE:
            bound = math.inf
        elif not math.isfinite(bound) and status is not OracleStatus.OPTIMAL:
            bound = -math.inf
        return _Raw(
            k,
            bound,
            status,
            {
                "solver_status": h.modelStatusToString(ms),
                "run_status": str(run_status),
                "nodes": int(info.mip_node_count),
                "solve_s": solve_s,
                "bound_trusted": self.bound_trusted,
                **({"scheduler_reset": True} if reset else {}),
            },
        )
