"""Tables and bounds of the structured oracle (:mod:`oracledp.oracles._structured`).

Steps 1, 2 and 4 of the method described there, for a table with few numeric and many binary
columns, with k = (v, u) (numeric and binary weights): the outer candidates v
(:func:`_enumerate_ball`), the problem-dependent data (:class:`_Prepared`), the exact loss
table f_c(t) of every cell c for every v (:func:`loss_tables`), the cost terms of u for a
fixed v (:func:`terms`) and a lower bound on the objective of each v (:func:`lower_bounds`:
the cell-wise minimum of the loss tables plus a dynamic program over the norm budget,
:func:`norm_dp`, plus the exact numeric term, :func:`numeric_cost`).  The loss tables are
exact integer counts.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from oracledp.oracles._halfspace import HalfspaceProblem, Perturbation
from oracledp.oracles._structured_model import _InnerModel

_BLOCK_ENTRIES = 1 << 21
"""Groups x outer candidates processed at once when counting losses (about 16 MB per array)."""


def count_ball(k: int, kmax: int, cap: int) -> int:
    """The number of integer vectors in [-kmax, kmax]^k with squared norm <= cap, counted
    exactly by a dynamic program over the squared norm (nothing enumerated)."""
    ways = np.zeros(cap + 1, dtype=object)
    ways[0] = 1
    for _ in range(k):
        new = np.zeros_like(ways)
        for a in range(-kmax, kmax + 1):
            s = a * a
            if s <= cap:
                new[s:] = new[s:] + ways[: cap + 1 - s]
        ways = new
    return int(ways.sum())


def _enumerate_ball(k: int, kmax: int, cap: int) -> NDArray[np.int64]:
    """Integer vectors in [-kmax, kmax]^k with squared norm <= cap, in lexicographic order.

    Built one coordinate at a time, keeping only prefixes inside the ball: every prefix
    count is at most the final count (a prefix padded with zeros is in the ball), so memory
    stays proportional to the answer (the full grid (2 kmax + 1)^k is never formed: a former
    version did, and failed beyond 32 coordinates or ran out of memory on wide tables)."""
    vals = np.arange(-kmax, kmax + 1, dtype=np.int64)
    sq = vals * vals
    norm = np.zeros(1, dtype=np.int64)
    parents, values = [], []  # per coordinate: each prefix's parent prefix and last value
    for _ in range(k):
        total = norm[:, None] + sq[None, :]  # (prefixes, values), prefix-major: lexicographic
        pi, vi = np.nonzero(total <= cap)
        parents.append(pi)
        values.append(vals[vi])
        norm = total[pi, vi]
    # the vectors, read back from the last coordinate to the first: O(count x k), where
    # copying the prefix matrix at every coordinate was O(count x k^2)
    out = np.empty((len(norm), k), dtype=np.int64)
    idx = np.arange(len(norm))
    for j in range(k - 1, -1, -1):
        out[:, j] = values[j][idx]
        idx = parents[j][idx]
    return out


@dataclass
class _Prepared:
    """Problem-dependent data, and the inner models built so far (one per visited v)."""

    num_cols: NDArray[np.int64]
    cat_cols: NDArray[np.int64]
    V: NDArray[np.int64]  # outer candidates (numeric weights)
    Vn2: NDArray[np.int64]  # their squared norms
    cells: NDArray[np.int8]  # (cells, binary columns) membership
    n_cells: int
    cell_size: NDArray[np.int64]  # active binary columns per cell
    T: int  # global range of a cell score: t in [-T, T]
    T_cell: NDArray[np.int64]  # per-cell range (from the norm bound)
    loss_tables: NDArray[np.int64]  # (|V|, cells, 2T+1) exact f_c(t) for each v
    models: dict[int, _InnerModel]


def loss_tables(problem: HalfspaceProblem, num_cols: NDArray[np.int64], V: NDArray[np.int64],
                cell_of_group: NDArray[np.int64], n_cells: int, T: int) -> NDArray[np.int64]:
    """f_c(t) for every outer candidate v, cell c and t in [-T, T] (exact counts).

    With ``s = <x_num, v>`` (exact integers), a positive group is correct iff
    ``t >= lo = ceil((1 - s)/Q)``; a negative one iff ``t <= hi = floor((-1 - s)/Q)``.
    Errors at t: positives with lo > t plus negatives with hi < t.  The groups are
    processed in blocks of rows so the working memory stays at about
    :data:`_BLOCK_ENTRIES` int64 entries however many distinct rows the table has.
    """
    Q = problem.Q
    nV = V.shape[0]
    width = 2 * T + 3  # positions for values -T-1 .. T+1
    size = nV * n_cells * width
    hp = np.zeros(size, dtype=np.float64)
    hn = np.zeros(size, dtype=np.float64)
    v_base = np.arange(nV, dtype=np.int64)[None, :] * n_cells
    Nn = problem.N[:, num_cols]
    n_groups = Nn.shape[0]
    step = max(1, _BLOCK_ENTRIES // max(nV, 1))
    for start in range(0, n_groups, step):
        sl = slice(start, min(start + step, n_groups))
        S = Nn[sl] @ V.T  # exact integers
        base = (v_base + cell_of_group[sl, None]) * width
        n_pos, n_neg = problem.n_pos[sl], problem.n_neg[sl]
        has_pos, has_neg = n_pos > 0, n_neg > 0
        if has_pos.any():
            lo = np.clip(-((S[has_pos] - 1) // Q), -T - 1, T + 1) + T + 1  # 0 .. 2T+2
            w = np.broadcast_to(n_pos[has_pos, None], lo.shape)
            hp += np.bincount((base[has_pos] + lo).ravel(), weights=w.ravel(),
                              minlength=size)
        if has_neg.any():
            hi = np.clip((-1 - S[has_neg]) // Q, -T - 1, T + 1) + T + 1
            w = np.broadcast_to(n_neg[has_neg, None], hi.shape)
            hn += np.bincount((base[has_neg] + hi).ravel(), weights=w.ravel(),
                              minlength=size)
    hp = hp.reshape(nV, n_cells, width)
    hn = hn.reshape(nV, n_cells, width)
    # errors_pos(t) = #{lo > t}: suffix sums; errors_neg(t) = #{hi < t}: prefix sums
    suffix = np.cumsum(hp[:, :, ::-1], axis=2)[:, :, ::-1]  # suffix[i] = sum_{>= i}
    prefix = np.cumsum(hn, axis=2)  # prefix[i] = sum_{<= i}
    # t = -T..T sits at index i = t + T + 1 in 1..2T+1
    idx = np.arange(1, 2 * T + 2)
    f = suffix[:, :, idx + 1] + prefix[:, :, idx - 1]
    return np.rint(f).astype(np.int64)


def norm_dp(cost: NDArray[np.float64], kmax: int, cap: int) -> NDArray[np.float64]:
    """best[r] = min sum_j cost[j, a_j + kmax] subject to sum_j a_j^2 == r, |a_j| <= kmax."""
    best = np.full(cap + 1, np.inf)
    best[0] = 0.0
    for cj in cost:
        new = np.full(cap + 1, np.inf)
        for a in range(-kmax, kmax + 1):
            s = a * a
            if s <= cap:
                new[s:] = np.minimum(new[s:], best[: cap + 1 - s] + cj[a + kmax])
        best = new
    return best


def numeric_cost(prep: _Prepared, pert: Perturbation, kmax: int) -> NDArray[np.float64]:
    """sum_j value_cost[numeric j, v_j] for every outer candidate v."""
    if len(prep.num_cols) == 0:
        return np.zeros(len(prep.V))
    return pert.value_cost[prep.num_cols[None, :], prep.V + kmax].sum(axis=1)


def lower_bounds(problem: HalfspaceProblem, prep: _Prepared,
                 pert: Perturbation) -> NDArray[np.float64]:
    """A lower bound on the objective for each outer candidate v."""
    sp = problem.space
    cap, kmax = sp.k_norm2_max, sp.k_max
    num_cost = numeric_cost(prep, pert, kmax)
    # (a) cell-wise minimum of the loss over each cell's reachable score range
    R = cap - prep.Vn2  # remaining squared-norm budget for u
    Tcv = np.minimum(prep.cell_size[None, :] * kmax,
                     np.floor(np.sqrt(prep.cell_size[None, :] * R[:, None]) + 1e-9))
    t = np.arange(-prep.T, prep.T + 1)
    mask = np.abs(t)[None, None, :] <= Tcv[:, :, None]
    f = np.where(mask, prep.loss_tables, np.iinfo(np.int64).max // 4)
    loss_lb = f.min(axis=2).sum(axis=1).astype(np.float64)
    # (b) value costs of u and the norm cost, by dynamic programming over the norm budget
    best = norm_dp(pert.value_cost[prep.cat_cols], kmax, cap)
    r = np.arange(cap + 1)
    pert_lb = np.empty(len(prep.V))
    for s2 in np.unique(prep.Vn2):
        ok = r <= cap - s2
        pert_lb[prep.Vn2 == s2] = float(np.min(best[ok] + pert.norm_cost[s2 + r[ok]]))
    return loss_lb + pert_lb + num_cost


def terms(problem: HalfspaceProblem, prep: _Prepared, vi: int, pert: Perturbation,
          ) -> tuple[NDArray[np.float64], NDArray[np.float64], int, float]:
    """For candidate vi: lin[j, a] (cost of u_j = a), g[r] = norm cost of ||u||^2 = r
    relative to r = 0 (+inf beyond the budget), the norm budget of u, and the constant
    norm_cost[||v||^2] + numeric value costs."""
    sp = problem.space
    cap, kmax = sp.k_norm2_max, sp.k_max
    s2 = int(prep.Vn2[vi])
    budget = cap - s2
    g = np.full(cap + 1, np.inf)
    g[: budget + 1] = pert.norm_cost[s2:] - pert.norm_cost[s2]
    num = float(pert.value_cost[prep.num_cols, prep.V[vi] + kmax].sum())
    return pert.value_cost[prep.cat_cols], g, budget, float(pert.norm_cost[s2]) + num


_LAMBDA_BITS = 20  # multipliers rounded to multiples of 2^-20 ...
_LAMBDA_MAX = 2.0**16  # ... of magnitude at most 2^16: mu = A^T lambda is exact in float64


def coupled_bound(problem: HalfspaceProblem, prep: _Prepared, vi: int,
                  lam: NDArray[np.float64], lin: NDArray[np.float64], g: NDArray[np.float64],
                  budget: int, const: float) -> float:
    """The coupled Lagrangian lower bound on min_u F(v, u) for candidate vi, valid for ANY
    multipliers ``lam`` (one per cell); see step 4 of :mod:`oracledp.oracles._structured`.

    ``lin``, ``g``, ``budget``, ``const``: the terms of u from :func:`terms` (value costs of
    u, norm cost relative to ||v||^2, the norm budget of u, the constant part).  With
    ``t = A u`` (A: cells x binary columns), for every feasible u::

        F(v, u) = sum_c [f_c(t_c) - lam_c t_c] + sum_j [lin_j(u_j) + mu_j u_j] + g(||u||^2) + const

    with mu = A^T lam (the two lam terms cancel exactly), so F is at least the sum of the
    per-cell minima over each cell's reachable range plus the exact minimum of the second
    part over the norm budget (:func:`norm_dp`).  ``lam`` is first rounded to multiples of
    2^-20 of magnitude at most 2^16, so mu is computed exactly (every partial sum is such a
    multiple below 2^53 * 2^-20); the bound is then lowered by an allowance covering the
    float error of the remaining sums and products.  Returns -inf if the table is too large
    for the exactness argument (more than 2^16 cells).
    """
    n_cells = prep.n_cells
    if n_cells >= 1 << 16:
        return -np.inf
    kmax = problem.space.k_max
    cap = problem.space.k_norm2_max
    scale = float(1 << _LAMBDA_BITS)
    lam = np.clip(np.rint(np.nan_to_num(np.asarray(lam, dtype=np.float64)) * scale) / scale,
                  -_LAMBDA_MAX, _LAMBDA_MAX)
    mu = prep.cells.T.astype(np.float64) @ lam  # exact (dyadic, bounded)
    # cells: min over the reachable range |t| <= Tcv of f_c(t) - lam_c t
    size = prep.cell_size
    Tcv = np.minimum(size * kmax, np.floor(np.sqrt(size * float(budget)) + 1e-9)).astype(np.int64)
    vals = _cell_terms(prep.loss_tables[vi], lam, Tcv, prep.T)
    cell_min = vals.min(axis=1)
    # u: exact minimum of sum_j (lin_j(u_j) + mu_j u_j) + g(||u||^2) over the norm budget
    a = np.arange(-kmax, kmax + 1)
    cost = lin + mu[:, None] * a[None, :]
    best = norm_dp(cost, kmax, cap)
    u_part = float(np.min(best[: budget + 1] + g[: budget + 1]))
    total = float(cell_min.sum()) + u_part + const
    if not np.isfinite(total):
        return -np.inf
    g_fin = g[: budget + 1]
    mag = (float(np.abs(np.where(np.isfinite(vals), vals, 0.0)).max(axis=1).sum())
           + float(np.abs(cost).max(axis=1, initial=0.0).sum())
           + float(np.abs(g_fin).max(initial=0.0)) + abs(const))
    return total - _float_allowance(n_cells + cost.shape[0], mag)


def _cell_terms(f: NDArray[np.int64], lam: NDArray[np.float64], Tcv: NDArray[np.int64],
                T: int) -> NDArray[np.float64]:
    """f_c(t) - lam_c t for t in [-T, T], +inf outside each cell's reachable |t| <= Tcv_c."""
    t = np.arange(-T, T + 1)
    vals = f - lam[:, None] * t[None, :]
    return np.where(np.abs(t)[None, :] <= Tcv[:, None], vals, np.inf)


def _float_allowance(n_terms: int, mag: float) -> float:
    """What the coupled bound is lowered by: ``(n_terms + 16) 2^-50 (1 + mag)``, with ``mag``
    the sum of the magnitudes of everything summed.  Each of the at most ``n_terms + 4``
    sums and the products before them (cells' minima, the dynamic program's sums over the
    binary columns, the norm and constant terms) errs by at most 2^-53 relative to the
    magnitudes involved; this is 8x that, far below the float band of
    :mod:`oracledp.oracles._exact`."""
    return (n_terms + 16) * 2.0**-50 * (1.0 + mag)
