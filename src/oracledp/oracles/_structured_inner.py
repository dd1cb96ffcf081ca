"""One inner problem of the structured oracle (:mod:`oracledp.oracles._structured`).

For one outer candidate v and one noise draw: this draw's costs loaded on v's kept HiGHS model
(:func:`load_costs`), then the question the search asks of it (:func:`solve_inner`): the LP
relaxation's rigorous bounds (the weak-duality bound of
:func:`~oracledp.oracles._structured_model.dual_bound` and the coupled Lagrangian bound of
:func:`~oracledp.oracles._structured_tables.coupled_bound`), and unless they prune v, the
inner MIP with the search's cutoff, tilt, no-good rows, start and node limit.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np
from numpy.typing import NDArray

from oracledp.oracles._halfspace import HalfspaceProblem, Perturbation
from oracledp.oracles._structured_model import _InnerModel, dual_bound, run_highs, seed_start
from oracledp.oracles._structured_tables import _Prepared, coupled_bound, terms

_INT_INF = 2**31 - 1  # HiGHS's "no limit" for integer options


def load_costs(model: Any, lin: NDArray[np.float64], g: NDArray[np.float64], budget: int,
                cap: int) -> NDArray[np.float64]:
    """Set this draw's costs on the reused model: ``lin`` on the cells, the norm-budget
    increments of ``g`` on the first ``budget`` rho columns (the others fixed at 0)."""
    rho_cost = np.zeros(cap)
    rho_cost[:budget] = np.diff(g[: budget + 1])
    ub = np.ones(cap)
    ub[budget:] = 0.0
    upd = np.concatenate([model.z_index.ravel(), model.rho_index])
    model.highs.changeColsCost(len(upd), upd.astype(np.int32),
                               np.concatenate([lin.ravel(), rho_cost]))
    model.highs.changeColsBounds(cap, model.rho_index.astype(np.int32), np.zeros(cap), ub)
    return rho_cost


def solve_inner(problem: HalfspaceProblem, prep: _Prepared, model: _InnerModel, vi: int,
                pert: Perturbation, cutoff: float, time_left: float,
                u_start: NDArray[np.int64] | None = None, *, lp_prune: bool = True,
                coupled: bool = True, lp_only: bool = False,
                skip_lp: bool = False, lp_threshold: float | None = None,
                exclude: list[NDArray[np.int64]] | None = None,
                tilt: tuple[NDArray[np.int64], float] | None = None,
                node_limit: int | None = None, work: list[int] | None = None,
                duals: list[NDArray[np.float64]] | None = None, presolve: bool = False,
                ) -> tuple[str, float, NDArray[np.int64] | None, float]:
    """Solve the inner MIP for candidate vi on its model: (status, value, u, dual bound).

    ``model``: vi's inner model (:func:`~oracledp.oracles._structured_model.build_inner`),
    built on first use and kept by the oracle: between noise draws only the costs of the
    one-hot values of u and of the norm encoding change.  ``lp_prune``: the LP relaxation
    first, unless ``skip_lp`` or the cutoff is infinite; ``coupled``: its link-row duals also
    give the coupled bound (both speed only, as the oracle's options of the same names).
    ``cutoff``: HiGHS's objective bound (nodes whose bound is above it are discarded).
    Status "lp_pruned": the LP relaxation's rigorous bound is above ``lp_threshold``
    (default: the cutoff), so no point of vi is (no MIP).
    ``lp_only``: return ("lp_bound", inf, None, that bound) (-inf if the LP failed).
    ``skip_lp``: go straight to the MIP (the LP bound is already known).
    ``exclude``: values of u cut off by no-good rows (added for this MIP only).
    ``tilt = (c, eps)``: the MIP minimizes ``F(u) - eps #{j: u_j != c_j}`` instead
    (every other point gains at least eps on c; the LP bound is of F itself).
    ``node_limit``: HiGHS's ``mip_max_nodes`` for the MIP (status "work_limit" when
    reached).  ``work``: a list the work done is appended to (1 per LP relaxation,
    1 + the branch-and-bound nodes per MIP).  ``presolve``: HiGHS's presolve for the MIP
    (speed only; the search chooses it: :data:`~oracledp.oracles._structured._PRESOLVE_ABOVE_NORM2`).

    Values include every constant, i.e. they are objective values F(v, u).
    """
    import highspy

    sp = problem.space
    cap, kmax = sp.k_norm2_max, sp.k_max
    h = model.highs
    lin, g, budget, const_pert = terms(problem, prep, vi, pert)
    rho_cost = load_costs(model, lin, g, budget, cap)
    const = model.const_loss + const_pert
    if lp_only or (lp_prune and not skip_lp and math.isfinite(cutoff)):
        # LP relaxation first (milliseconds): if its rigorous dual bound reaches the
        # cutoff, no point of this v beats the incumbent and the MIP is not needed.
        cost = model.cost0.copy()
        cost[model.z_index.ravel()] = lin.ravel()
        cost[model.rho_index] = rho_cost
        col_ub = model.col_ub.copy()
        col_ub[model.rho_index] = np.arange(cap) < budget  # the rho columns' bounds
        h.setOptionValue("solve_relaxation", True)
        h.setOptionValue("time_limit", max(time_left, 1e-3))
        t_lp = time.perf_counter()
        try:
            run_highs(h)
            lp_ok = h.getModelStatus() == highspy.HighsModelStatus.kOptimal
            y = np.asarray(h.getSolution().row_dual, dtype=np.float64) if lp_ok else None
        finally:
            h.setOptionValue("solve_relaxation", False)
            time_left -= time.perf_counter() - t_lp
        if work is not None:
            work.append(1)
        lp_bound = -math.inf
        if y is not None and len(y) == model.A.shape[0]:
            lp_bound = dual_bound(model, cost, col_ub, y) + const
            if coupled:  # the link rows' multipliers, with lambda = -y
                lam = np.where(model.link_rows >= 0, -y[np.maximum(model.link_rows, 0)],
                               0.0)
                if duals is not None:
                    duals.append(lam)
                lp_bound = max(lp_bound, coupled_bound(problem, prep, vi, lam, lin,
                                                             g, budget, const_pert))
        if lp_only:
            return "lp_bound", math.inf, None, lp_bound
        if lp_bound > (cutoff if lp_threshold is None else lp_threshold):
            return "lp_pruned", math.inf, None, lp_bound
    exclude = exclude or []
    if tilt is not None:
        c, eps = tilt
        tilted = lin - eps
        tilted[np.arange(len(c)), np.asarray(c, dtype=np.int64) + kmax] += eps
        h.changeColsCost(tilted.size, model.z_index.ravel().astype(np.int32),
                         tilted.ravel())
    if u_start is not None and not any(np.array_equal(u_start, x) for x in exclude):
        seed_start(prep, model, u_start, kmax)  # a feasible point: HiGHS starts from it
    h.setOptionValue("objective_bound", float(cutoff - const) if math.isfinite(cutoff)
                     else highspy.kHighsInf)
    h.setOptionValue("time_limit", max(time_left, 1e-3))
    h.setOptionValue("mip_max_nodes", _INT_INF if node_limit is None
                     else max(1, int(node_limit)))
    h.setOptionValue("presolve", "on" if presolve else "off")
    n_rows = h.getNumRow()
    m = len(prep.cat_cols)
    for x in exclude:  # sum_j z_{j, x_j} <= m - 1: any u but x
        cols = model.z_index[np.arange(m), np.asarray(x, dtype=np.int64) + kmax]
        h.addRow(-highspy.kHighsInf, float(m - 1), m, cols.astype(np.int32), np.ones(m))
    try:
        run_highs(h)
        st = h.getModelStatus()
        info = h.getInfo()
        dual = float(info.mip_dual_bound) + const
        value = float(info.objective_function_value) + const
        u = None
        if info.primal_solution_status == 2:  # a feasible point exists
            x = np.asarray(h.getSolution().col_value)
            u = np.rint(x[model.u_index]).astype(np.int64)
        status_text = h.modelStatusToString(st)
        if work is not None:
            work.append(1 + int(info.mip_node_count))
    finally:
        if exclude:  # (changing the model clears HiGHS's solution: read first)
            h.deleteRows(len(exclude),
                         np.arange(n_rows, n_rows + len(exclude), dtype=np.int32))
    if st == highspy.HighsModelStatus.kOptimal and u is not None:
        return "optimal", value, u, dual
    if st in (highspy.HighsModelStatus.kObjectiveBound, highspy.HighsModelStatus.kInfeasible):
        return "pruned", math.inf, None, cutoff  # nothing below the cutoff for this v
    if st in (highspy.HighsModelStatus.kTimeLimit, highspy.HighsModelStatus.kSolutionLimit):
        kind = "time_limit" if st == highspy.HighsModelStatus.kTimeLimit else "work_limit"
        if u is not None:  # a feasible incumbent exists
            return kind, value, u, dual
        return kind, math.inf, None, dual
    return f"error:{status_text}", math.inf, None, -math.inf
