"""The inner HiGHS model of the structured oracle (:mod:`oracledp.oracles._structured`).

Step 3 of the method described there, and the rigorous LP bound of step 4: for one outer
candidate v, the integer program over the binary weights u (:func:`build_inner`: one-hot
values of u, an incremental encoding of ||u||^2 and, per cell, a compressed incremental
(ladder) encoding of its loss table), the data kept with it (:class:`_InnerModel`), a
weak-duality bound evaluated outside the solver for any row multipliers
(:func:`dual_bound`), a feasible start handed to HiGHS (:func:`seed_start`) and one HiGHS run
with the scheduler reset (:func:`run_highs`).  highspy and scipy are imported on first use.
"""

from __future__ import annotations

import itertools
import math
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from oracledp.oracles._halfspace import HalfspaceProblem
from oracledp.oracles._highs import new_highs

if TYPE_CHECKING:
    from oracledp.oracles._structured_tables import _Prepared


@dataclass
class _InnerModel:
    """The inner MIP of one outer candidate v (structure depends on v, not on the noise)."""

    highs: Any
    n_cols: int
    u_index: NDArray[np.int64]  # (m,)
    z_index: NDArray[np.int64]  # (m, 2 kmax + 1)
    rho_index: NDArray[np.int64]  # rho_s, s = 1..cap
    t_index: NDArray[np.int64]  # per cell with breakpoints: column of t_c (-1 if none)
    delta_cols: list[NDArray[np.int64]]  # per cell: columns of delta_{c,k}
    breaks: list[NDArray[np.int64]]  # per cell: breakpoints b_k (delta_k = [t_c >= b_k])
    const_loss: float  # sum_c f_c(-T_c)
    link_rows: NDArray[np.int64]  # per cell: its row t_c = sum_{j in c} u_j (-1 if none)
    # the constraint data, for a rigorous LP-dual bound computed outside the solver
    A: Any  # scipy.sparse CSR (rows, n_cols)
    row_lo: NDArray[np.float64]
    row_hi: NDArray[np.float64]
    col_lb: NDArray[np.float64]
    col_ub: NDArray[np.float64]  # base upper bounds (the rho bounds change per v)
    cost0: NDArray[np.float64]  # base costs (the delta costs; z and rho costs change per call)


def _highs_solution(x: NDArray[np.float64]) -> Any:
    import highspy

    sol = highspy.HighsSolution()
    sol.col_value = list(map(float, x))
    sol.value_valid = True
    return sol


def build_inner(problem: HalfspaceProblem, prep: _Prepared, vi: int, *, verbose: bool,
                threads: int) -> _InnerModel:
    """Build the inner MIP for candidate vi.

    Columns: u_j (integer), z_{j,a} (one-hot value of u_j, for the exact
    squared norm), rho_s (incremental encoding of r = ||u||^2), and per cell
    with a non-constant loss: t_c (integer) and delta_{c,k} = [t_c >= b_k]
    for the breakpoints b_k of f_c (the compressed incremental encoding).
    Rows:  sum_a z_{j,a} = 1;  u_j = sum_a a z_{j,a};  sum a^2 z - sum rho = 0;
    rho_s >= rho_{s+1};  t_c = sum_{j in c} u_j;
    t_c >= -T_c + sum_k (b_k - b_{k-1}) delta_k;  t_c <= b_1 - 1 + sum_k (b_{k+1} - b_k) delta_k;
    delta_k >= delta_{k+1}.  With delta ordered these force delta_k = [t_c >= b_k] exactly,
    so the cost f_c(-T_c) + sum_k (f_c(b_k) - f_c(b_k - 1)) delta_k equals f_c(t_c).
    """
    import highspy

    sp = problem.space
    kmax, cap = sp.k_max, sp.k_norm2_max
    m = len(prep.cat_cols)
    vals = np.arange(-kmax, kmax + 1)
    nv = len(vals)
    f = prep.loss_tables[vi]
    lo: list[float] = []
    hi: list[float] = []
    idx: list[NDArray[np.int64]] = []
    coef: list[NDArray[np.float64]] = []

    def row(ix: NDArray[np.int64], vx: NDArray[np.float64], lo_: float, hi_: float) -> None:
        idx.append(np.asarray(ix, dtype=np.int64))
        coef.append(np.asarray(vx, dtype=np.float64))
        lo.append(lo_)
        hi.append(hi_)

    inf = highspy.kHighsInf
    col_lb: list[NDArray[np.float64]] = []
    col_ub: list[NDArray[np.float64]] = []
    n = 0

    def cols(k: int, lb: float, ub: float) -> NDArray[np.int64]:
        nonlocal n
        out = np.arange(n, n + k, dtype=np.int64)
        col_lb.append(np.full(k, lb))
        col_ub.append(np.full(k, ub))
        n += k
        return out

    u_index = cols(m, -kmax, kmax)
    z_index = cols(m * nv, 0.0, 1.0).reshape(m, nv)
    rho_index = cols(cap, 0.0, 1.0)
    for j in range(m):
        row(z_index[j], np.ones(nv), 1.0, 1.0)
        row(np.concatenate([[u_index[j]], z_index[j]]),
            np.concatenate([[-1.0], vals.astype(float)]), 0.0, 0.0)
    row(np.concatenate([z_index.ravel(), rho_index]),
        np.concatenate([np.tile(vals**2, m).astype(float), -np.ones(cap)]), 0.0, 0.0)
    for a, b in itertools.pairwise(rho_index):
        row(np.array([a, b]), np.array([1.0, -1.0]), 0.0, inf)
    # Per cell with a non-constant loss, in cell order: columns t_c, delta_{c,1..}; rows
    # (link t_c = sum u_j; the two ladder rows; delta_k >= delta_{k+1}), all built at once.
    T, Tc = prep.T, prep.T_cell
    const_loss = float(f[np.arange(prep.n_cells), T - Tc].sum())  # integers: exact
    D = np.diff(f, axis=1)  # D[c, i] = f_c(i + 1 - T) - f_c(i - T)
    pos = np.arange(2 * T)
    cc, ii = np.nonzero((D != 0) & (pos[None, :] >= (T - Tc)[:, None])
                        & (pos[None, :] <= (T + Tc - 1)[:, None]))
    b_all = (ii + 1 - T).astype(np.int64)  # delta = [t_c >= b]; sorted within each cell
    cost_all = D[cc, ii].astype(np.float64)
    nb = np.bincount(cc, minlength=prep.n_cells)
    first = np.concatenate([[0], np.cumsum(nb)[:-1]]).astype(np.int64)
    ac = np.flatnonzero(nb > 0)
    nba = nb[ac]
    t_index = np.full(prep.n_cells, -1, dtype=np.int64)
    t_index[ac] = n + np.concatenate([[0], np.cumsum(1 + nba)[:-1]]).astype(np.int64)
    rank = np.arange(len(cc), dtype=np.int64) - first[cc]
    dcol = t_index[cc] + 1 + rank
    n_cell_cols = int((1 + nba).sum())
    lb_c, ub_c = np.zeros(n_cell_cols), np.ones(n_cell_cols)
    lb_c[t_index[ac] - n], ub_c[t_index[ac] - n] = -Tc[ac], Tc[ac]
    col_lb.append(lb_c)
    col_ub.append(ub_c)
    n += n_cell_cols
    last = rank == nb[cc] - 1
    b_prev = np.where(rank == 0, -Tc[cc], np.roll(b_all, 1))
    b_next = np.where(last, Tc[cc] + 1, np.roll(b_all, -1))
    r_base = len(lo)
    r0 = np.full(prep.n_cells, -1, dtype=np.int64)
    r0[ac] = r_base + np.concatenate([[0], np.cumsum(nba + 2)[:-1]]).astype(np.int64)
    mc, mj = np.nonzero(prep.cells[ac])
    ones_t = np.ones(len(ac))
    big = m + 2  # position of t_c at the end of its link row
    e_row = np.concatenate([r0[ac][mc], r0[ac], r0[ac] + 1, r0[cc] + 1, r0[ac] + 2,
                            r0[cc] + 2, (r0[cc] + 3 + rank)[~last],
                            (r0[cc] + 3 + rank)[~last]])
    e_pos = np.concatenate([mj, np.full(len(ac), big), np.zeros(len(ac)), 1 + rank,
                            np.zeros(len(ac)), 1 + rank, np.zeros(int((~last).sum())),
                            np.ones(int((~last).sum()))])
    nxt = np.roll(dcol, -1)
    e_col = np.concatenate([u_index[mj], t_index[ac], t_index[ac], dcol, t_index[ac], dcol,
                            dcol[~last], nxt[~last]])
    e_val = np.concatenate([np.ones(len(mj)), -ones_t, ones_t, -(b_all - b_prev), ones_t,
                            -(b_next - b_all), np.ones(int((~last).sum())),
                            -np.ones(int((~last).sum()))]).astype(np.float64)
    order = np.lexsort((e_pos, e_row))
    e_row, e_col, e_val = e_row[order], e_col[order], e_val[order]
    n_cell_rows = int((nba + 2).sum())
    row_len = np.bincount(e_row - r_base, minlength=n_cell_rows)
    head_len = [len(i) for i in idx]
    idx.append(e_col)
    coef.append(e_val)
    kind = np.full(n_cell_rows, 3)  # 0 link, 1 lower ladder, 2 upper ladder, 3 order
    kind[r0[ac] - r_base], kind[r0[ac] + 1 - r_base], kind[r0[ac] + 2 - r_base] = 0, 1, 2
    c_of_row = np.repeat(ac, nba + 2)
    lo_c = np.select([kind == 0, kind == 1, kind == 2], [0.0, -Tc[c_of_row], -inf], 0.0)
    b_first = np.zeros(prep.n_cells, dtype=np.int64)
    b_first[ac] = b_all[first[ac]]
    hi_c = np.select([kind == 0, kind == 1, kind == 2], [0.0, inf, b_first[c_of_row] - 1.0],
                     inf)
    lo.extend(lo_c.tolist())
    hi.extend(hi_c.tolist())
    delta_cols = [dcol[first[c]: first[c] + nb[c]] for c in range(prep.n_cells)]
    breaks = [b_all[first[c]: first[c] + nb[c]] for c in range(prep.n_cells)]
    delta_all = [dcol] if len(dcol) else []
    delta_cost = [cost_all] if len(dcol) else []
    h = new_highs(verbose)
    h.setOptionValue("mip_rel_gap", 0.0)
    h.setOptionValue("mip_abs_gap", 1e-9)
    # no presolve (speed only): these models are small and solved hundreds of times; on the
    # bundled wide tables HiGHS's presolve took most of each root node (health_insurance
    # RSPM, ||k||^2 <= 4: 50 s -> 17 s of MIP time; Adult unchanged)
    h.setOptionValue("presolve", "off")
    if threads > 0:
        h.setOptionValue("threads", threads)
    lb_all, ub_all = np.concatenate(col_lb), np.concatenate(col_ub)
    h.addVars(n, lb_all, ub_all)
    h.changeColsIntegrality(n, np.arange(n, dtype=np.int32),
                            np.full(n, highspy.HighsVarType.kInteger))
    lengths = np.concatenate([np.asarray(head_len, dtype=np.int64), row_len])
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int32)
    index = np.concatenate(idx).astype(np.int32)
    h.addRows(len(lo), np.asarray(lo), np.asarray(hi), len(index), starts, index,
              np.concatenate(coef))
    cost0 = np.zeros(n)
    if delta_all:
        dall = np.concatenate(delta_all)
        h.changeColsCost(len(dall), dall.astype(np.int32), np.concatenate(delta_cost))
        cost0[dall] = np.concatenate(delta_cost)
    from scipy.sparse import csr_matrix

    indptr = np.concatenate([starts, [len(index)]]).astype(np.int64)
    A = csr_matrix((np.concatenate(coef), index, indptr), shape=(len(lo), n))
    return _InnerModel(highs=h, n_cols=n, u_index=u_index, z_index=z_index,
                       rho_index=rho_index, t_index=t_index, delta_cols=delta_cols,
                       breaks=breaks, const_loss=const_loss, link_rows=r0, A=A,
                       row_lo=np.asarray(lo, dtype=np.float64),
                       row_hi=np.asarray(hi, dtype=np.float64), col_lb=lb_all,
                       col_ub=ub_all, cost0=cost0)


def dual_bound(model: _InnerModel, cost: NDArray[np.float64], ub: NDArray[np.float64],
               y: NDArray[np.float64]) -> float:
    """A lower bound on min cost'x over the LP relaxation, valid for ANY row multipliers y.

    Weak duality, evaluated here rather than trusted from the solver: with
    d = cost - A'y, cost'x = d'x + y'Ax >= sum_i (y_i L_i if y_i > 0 else y_i U_i)
    + sum_j min(d_j l_j, d_j u_j) for every x with L <= Ax <= U, l <= x <= u
    (every column is bounded).  A multiplier whose side is infinite is set to 0.
    y only decides how tight the bound is (HiGHS's row duals make it the LP
    optimum); its validity needs no trust in the solver.  The float evaluation
    error is covered by a relative margin.
    """
    y = np.where((y > 0) & ~np.isfinite(model.row_lo), 0.0, y)
    y = np.where((y < 0) & ~np.isfinite(model.row_hi), 0.0, y)
    row_part = np.where(y > 0, y * np.where(np.isfinite(model.row_lo), model.row_lo, 0.0),
                        y * np.where(np.isfinite(model.row_hi), model.row_hi, 0.0))
    d = cost - model.A.T @ y
    col_part = np.minimum(d * model.col_lb, d * ub)
    terms = np.concatenate([row_part, col_part])
    if not np.isfinite(terms).all():
        return -math.inf
    return float(terms.sum()) - 1e-9 * (1.0 + float(np.abs(terms).sum()))


def seed_start(prep: _Prepared, model: _InnerModel, u: NDArray[np.int64], kmax: int) -> None:
    """Hand HiGHS a feasible point (the heuristic incumbent), every column set."""
    x = np.zeros(model.n_cols)
    x[model.u_index] = u
    x[model.z_index[np.arange(len(u)), u + kmax]] = 1.0
    x[model.rho_index[: int((u**2).sum())]] = 1.0
    t = prep.cells.astype(np.int64) @ u
    for c in np.flatnonzero(model.t_index >= 0):
        x[model.t_index[c]] = t[c]
        x[model.delta_cols[c]] = (t[c] >= model.breaks[c]).astype(float)
    model.highs.setSolution(_highs_solution(x))


def run_highs(h: Any) -> None:
    import highspy

    if h.run() == highspy.HighsStatus.kError and (
        h.getModelStatus() == highspy.HighsModelStatus.kNotset
    ) and threading.current_thread() is threading.main_thread():
        # HiGHS sizes one task scheduler per thread at its first solve; a later solve
        # asking for another thread count errors out: reset and retry once (on the main
        # thread only: a reset is not safe while a worker thread solves; a worker's
        # error is an unanswered question, which never certifies anything).
        highspy.Highs.resetGlobalScheduler(True)
        h.run()
