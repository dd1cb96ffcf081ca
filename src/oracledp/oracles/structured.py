"""Exact tabular decomposition oracle for 0/1-loss halfspaces.

Monolithic big-M integer programs for the OPDisc objective on Adult do not
close their gap in 30 s with any open solver.  This oracle exploits the shape
of tabular data instead: a few *numeric* columns plus many *binary*
(one-hot) columns.  Write k = (v, u) with v the weights of the numeric columns
and u those of the binary columns.  Then, exactly:

1. **Outer enumeration over v.**  The numeric weights are few (461 integer
   vectors with ||v||^2 <= 23 for Adult's three numeric columns).  For a fixed
   v, every group's numeric score ``s_g = Q <x_g^num, v>`` is a known integer.
2. **Cells.**  Groups sharing the same binary pattern form a *cell* c; their
   binary part of the score is one integer ``t_c = sum_{j in c} u_j``.  A
   group is correct iff ``Q t_c + s_g >= 1`` (label +1) or ``<= -1`` (label -1),
   i.e. iff t_c is above (below) an integer threshold, so the loss of a cell is
   an integer step function ``f_c(t)`` of t_c alone, tabulated exactly.
3. **Inner MIP for fixed v** over u: an incremental (ladder) encoding
   ``t_c = -T + sum_t delta_{c,t}``, ``delta_{c,t} >= delta_{c,t+1}`` with costs
   ``f_c(t) - f_c(t-1)``; its LP relaxation is the convex envelope of each f_c.
   u_j is encoded by one-hot binaries over its values, so ``r = ||u||^2`` is
   linear, and the normalization term ``-eta_{d+1} sqrt(1 - (||v||^2 + r)/D^2)``
   of pi is another incremental encoding over r (the square root depends only
   on the total squared norm).
4. **Bounds and pruning.**  A lower bound for each v adds (a) the cell-wise
   minimum of the loss tables, (b) a dynamic program over the norm budget for
   the linear and square-root terms, (c) the exact numeric linear term.  The v
   are visited best bound first; each inner problem first gets its LP relaxation
   (milliseconds), pruned when a weak-duality bound evaluated here from the LP's row
   duals (valid for any multipliers, so no trust in the solver's tolerances) is
   above the incumbent; otherwise the inner MIP runs with a cutoff; the search stops
   when every remaining bound is above the incumbent.
5. **Exact certificate** (see :mod:`oracledp.oracles.base`).  With ``tol`` the float
   band of :mod:`oracledp.oracles.exact` and ``w`` HiGHS's tolerance window
   (``_HIGHS_TIE_WINDOW`` = 1e-5: HiGHS discards points up to its MIP feasibility
   tolerance, 1e-6, below an incumbent or an objective bound):

   * a candidate v is discarded only when its bound exceeds the incumbent's float
     value by more than ``2 tol`` (then it exceeds the incumbent's exact objective);
   * each inner MIP asks *is there a point of v, other than the known ones, whose
     objective may lie below incumbent + 3 tol + w?*  The best known point ``c`` of v
     below that cutoff is kept out by a *tilt* (HiGHS minimizes
     ``F(u) - eps #{j: u_j != c_j}`` and the cutoff is lowered by eps, so every other
     point is asked about as before while c is above the cutoff), further known points
     by no-good rows;
   * "nothing below the cutoff" settles v; a point found becomes a known point of v,
     and HiGHS's optimality of it only says the other points of v lie above its value
     minus w: where that reaches the final incumbent's band, v is asked again (the
     *tie check*, usually one extra MIP on the incumbent's v) until settled;
   * every evaluated point within ``2 tol`` of the incumbent is a candidate, and the
     candidates are compared exactly at the end (tie rule: smallest k).

   What is trusted is what the design already trusted: that HiGHS's MIP answers hold
   up to its tolerance window w (no rounding of the costs is trusted: the float band
   covers it).  With no noise (eta = 0) the objective is an integer: the cutoff is the
   incumbent (a better point is better by 1), no tie check is needed, and any exact
   minimizer is returned.  A
   search stopped by the time limit (or a tie check that does not finish) is not
   certified.

The inner model is built once per problem and reused for every v and every
noise draw: only objective coefficients and a few column bounds change.

The method needs the binary columns to take values in {0, 1} and at most
``max_numeric`` other columns; :func:`structured_applicable` says whether it
applies.  Scores are integers (see :mod:`oracledp.oracles.halfspace`), and the final
point is re-evaluated in integer arithmetic by :func:`~oracledp.oracles.base.make_result`.
"""

from __future__ import annotations

import itertools
import math
import queue
import threading
import time
import weakref
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from oracledp.oracles._highs import new_highs
from oracledp.oracles.base import OracleResult, OracleStatus, make_result
from oracledp.oracles.exact import ExactObjective
from oracledp.oracles.halfspace import HalfspaceProblem, Perturbation, as_perturbation

# HiGHS discards points up to its MIP feasibility tolerance (1e-6, the default here) below an
# incumbent or an objective bound (HighsMipSolverData::computeNewUpperLimit); every question
# to HiGHS reaches this much further (covering that and its LP tolerances: trusted)
_HIGHS_TIE_WINDOW = 1e-5
_TIE_MAX_SOLVES = 8  # tie-check solves per call before refusing


class _DaemonPool:
    """Persistent daemon worker threads (HiGHS keeps one task scheduler per thread).

    Daemon threads, unlike ``concurrent.futures``' workers, are not joined at interpreter
    exit: a fit stopped by Ctrl-C (``oracledp fit``) exits at once even while a worker is
    inside a HiGHS solve, whose answer is then never used."""

    def __init__(self, n: int) -> None:
        self._tasks: queue.SimpleQueue[tuple[Any, Any, Future[Any]]] = queue.SimpleQueue()
        for i in range(n):
            threading.Thread(target=self._work, name=f"oracledp-highs-{i}", daemon=True).start()

    def _work(self) -> None:
        while True:
            fn, arg, fut = self._tasks.get()
            try:
                fut.set_result(fn(arg))
            except BaseException as exc:  # re-raised in the caller
                fut.set_exception(exc)

    def map(self, fn: Any, items: list[Any]) -> list[Any]:
        futures: list[Future[Any]] = []
        for x in items:
            fut: Future[Any] = Future()
            self._tasks.put((fn, x, fut))
            futures.append(fut)
        return [f.result() for f in futures]


_BLOCK_ENTRIES = 1 << 21
"""Groups x outer candidates processed at once when counting losses (about 16 MB per array)."""


def _enumerate_ball(k: int, kmax: int, cap: int) -> NDArray[np.int64]:
    """Integer vectors in [-kmax, kmax]^k with squared norm <= cap."""
    if k == 0:
        return np.zeros((1, 0), dtype=np.int64)
    vals = np.arange(-kmax, kmax + 1)
    grids = np.stack(np.meshgrid(*([vals] * k), indexing="ij"), axis=-1).reshape(-1, k)
    return grids[(grids**2).sum(axis=1) <= cap].astype(np.int64)


def _highs_solution(x: NDArray[np.float64]) -> Any:
    import highspy

    sol = highspy.HighsSolution()
    sol.col_value = list(map(float, x))
    sol.value_valid = True
    return sol


def structured_applicable(problem: HalfspaceProblem, max_numeric: int = 4,
                          max_outer: int = 50_000) -> bool:
    """Whether the decomposition applies: few numeric columns, the rest binary."""
    n_num = int((~problem.binary_columns).sum())
    if n_num > max_numeric:
        return False
    sp = problem.space
    return (2 * sp.k_max + 1) ** n_num <= 50 * max_outer


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
    # the constraint data, for a rigorous LP-dual bound computed outside the solver
    A: Any  # scipy.sparse CSR (rows, n_cols)
    row_lo: NDArray[np.float64]
    row_hi: NDArray[np.float64]
    col_lb: NDArray[np.float64]
    col_ub: NDArray[np.float64]  # base upper bounds (the rho bounds change per v)
    cost0: NDArray[np.float64]  # base costs (the delta costs; z and rho costs change per call)


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


class StructuredOracle:
    """Exact oracle by tabular decomposition, with HiGHS for the inner problems.

    Parameters
    ----------
    time_limit:
        Seconds for one solve (all inner MIPs together).  On expiry the result
        is not certified.
    threads:
        Threads for HiGHS (1 = deterministic and what the benchmarks use).
    max_numeric:
        Largest number of non-binary columns accepted.
    heuristic_candidates:
        How many outer candidates (best bound first) get a local-search incumbent
        before the exact phase (affects speed only, never the answer).
    max_models:
        Inner models kept between calls (one per visited outer candidate).
    lp_prune:
        Before an inner MIP, solve its LP relaxation and skip the MIP when a
        weak-duality bound, evaluated outside the solver from HiGHS's row duals
        (valid for any multipliers), already reaches the incumbent (speed only).
    workers:
        Inner problems (LP bounds, then MIPs) solved at once, each in its own thread
        with its own HiGHS model (HiGHS releases the GIL).  A batch of MIPs is asked with
        the incumbent known when the batch starts, which only makes some questions wider:
        a certified answer is the exact argmin whatever ``workers`` is (speed only; what
        an uncertified, time-limited search holds may differ).
    """

    name = "highs-structured"

    def __init__(self, *, time_limit: float = 60.0, threads: int = 1, max_numeric: int = 4,
                 heuristic_candidates: int = 20, max_models: int = 1024,
                 lp_prune: bool = True, workers: int = 1, verbose: bool = False) -> None:
        if not (time_limit > 0):
            raise ValueError(f"time_limit must be > 0, got {time_limit!r}")
        self.time_limit = float(time_limit)
        self.threads = int(threads)
        self.max_numeric = int(max_numeric)
        self.heuristic_candidates = int(heuristic_candidates)
        self.max_models = max(1, int(max_models))
        self.lp_prune = bool(lp_prune)
        if int(workers) < 1:
            raise ValueError(f"workers must be >= 1, got {workers!r}")
        self.workers = int(workers)
        self.verbose = verbose
        self._lock = threading.Lock()  # the per-problem model dictionaries
        self._pool: _DaemonPool | None = None
        self._cache: weakref.WeakKeyDictionary[HalfspaceProblem, _Prepared] = (
            weakref.WeakKeyDictionary()
        )

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()  # a copy for another process: no threads, no models
        state["_lock"], state["_pool"], state["_cache"] = None, None, None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()
        self._cache = weakref.WeakKeyDictionary()

    def _map(self, fn: Any, items: list[Any]) -> list[Any]:
        """fn over items, in the worker threads when there are several (results in order)."""
        if self.workers == 1 or len(items) <= 1:
            return [fn(x) for x in items]
        if self._pool is None:  # persistent threads: HiGHS keeps one scheduler per thread
            self._pool = _DaemonPool(self.workers)
        return self._pool.map(fn, items)

    # ------------------------------------------------------------------ preparation
    def prepare(self, problem: HalfspaceProblem) -> _Prepared:
        prep = self._cache.get(problem)
        if prep is None:
            prep = self._prepare(problem)
            self._cache[problem] = prep
        return prep

    def _prepare(self, problem: HalfspaceProblem) -> _Prepared:
        if not structured_applicable(problem, self.max_numeric):
            raise ValueError(
                f"the tabular decomposition needs at most {self.max_numeric} non-binary columns; "
                "use the monolithic formulation"
            )
        sp = problem.space
        kmax, cap = sp.k_max, sp.k_norm2_max
        binary = problem.binary_columns
        num_cols = np.flatnonzero(~binary)
        cat_cols = np.flatnonzero(binary)
        V = _enumerate_ball(len(num_cols), kmax, cap)
        Vn2 = (V**2).sum(axis=1)
        B = (problem.N[:, cat_cols] // problem.Q).astype(np.int8)
        cells, cell_of_group = np.unique(B, axis=0, return_inverse=True)
        cell_of_group = cell_of_group.ravel()
        n_cells = cells.shape[0]
        cell_size = cells.sum(axis=1).astype(np.int64)
        T_cell = np.minimum(cell_size * kmax, np.floor(np.sqrt(cell_size * cap) + 1e-9)).astype(
            np.int64
        )
        T = int(T_cell.max(initial=0))
        loss_tables = self._loss_tables(problem, num_cols, V, cell_of_group, n_cells, T)
        return _Prepared(
            num_cols=num_cols, cat_cols=cat_cols, V=V, Vn2=Vn2, cells=cells, n_cells=n_cells,
            cell_size=cell_size, T=T, T_cell=T_cell, loss_tables=loss_tables, models={},
        )

    @staticmethod
    def _loss_tables(problem: HalfspaceProblem, num_cols: NDArray[np.int64], V: NDArray[np.int64],
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

    def _build_inner(self, problem: HalfspaceProblem, prep: _Prepared, vi: int) -> _InnerModel:
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
        h = new_highs(self.verbose)
        h.setOptionValue("mip_rel_gap", 0.0)
        h.setOptionValue("mip_abs_gap", 1e-9)
        if self.threads > 0:
            h.setOptionValue("threads", self.threads)
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
                           breaks=breaks, const_loss=const_loss, A=A,
                           row_lo=np.asarray(lo, dtype=np.float64),
                           row_hi=np.asarray(hi, dtype=np.float64), col_lb=lb_all,
                           col_ub=ub_all, cost0=cost0)

    @staticmethod
    def _dual_bound(model: _InnerModel, cost: NDArray[np.float64], ub: NDArray[np.float64],
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

    # ------------------------------------------------------------------ bounds
    @staticmethod
    def _norm_dp(cost: NDArray[np.float64], kmax: int, cap: int) -> NDArray[np.float64]:
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

    @staticmethod
    def _numeric_cost(prep: _Prepared, pert: Perturbation, kmax: int) -> NDArray[np.float64]:
        """sum_j value_cost[numeric j, v_j] for every outer candidate v."""
        if len(prep.num_cols) == 0:
            return np.zeros(len(prep.V))
        return pert.value_cost[prep.num_cols[None, :], prep.V + kmax].sum(axis=1)

    def _lower_bounds(self, problem: HalfspaceProblem, prep: _Prepared,
                      pert: Perturbation) -> NDArray[np.float64]:
        """A lower bound on the objective for each outer candidate v."""
        sp = problem.space
        cap, kmax = sp.k_norm2_max, sp.k_max
        num_cost = self._numeric_cost(prep, pert, kmax)
        # (a) cell-wise minimum of the loss over each cell's reachable score range
        R = cap - prep.Vn2  # remaining squared-norm budget for u
        Tcv = np.minimum(prep.cell_size[None, :] * kmax,
                         np.floor(np.sqrt(prep.cell_size[None, :] * R[:, None]) + 1e-9))
        t = np.arange(-prep.T, prep.T + 1)
        mask = np.abs(t)[None, None, :] <= Tcv[:, :, None]
        f = np.where(mask, prep.loss_tables, np.iinfo(np.int64).max // 4)
        loss_lb = f.min(axis=2).sum(axis=1).astype(np.float64)
        # (b) value costs of u and the norm cost, by dynamic programming over the norm budget
        best = self._norm_dp(pert.value_cost[prep.cat_cols], kmax, cap)
        r = np.arange(cap + 1)
        pert_lb = np.empty(len(prep.V))
        for s2 in np.unique(prep.Vn2):
            ok = r <= cap - s2
            pert_lb[prep.Vn2 == s2] = float(np.min(best[ok] + pert.norm_cost[s2 + r[ok]]))
        return loss_lb + pert_lb + num_cost

    # ------------------------------------------------------------------ heuristic
    def _terms(self, problem: HalfspaceProblem, prep: _Prepared, vi: int, pert: Perturbation,
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

    def _heuristic(self, problem: HalfspaceProblem, prep: _Prepared, vi: int,
                   pert: Perturbation, starts: list[NDArray[np.int64]],
                   ) -> tuple[float, NDArray[np.int64]]:
        """Best local-search point for candidate vi over several starts (full objective value).

        Starts: the given points, zero, and a least-squares fit of u to each cell's best score.
        """
        lin, g, budget, const = self._terms(problem, prep, vi, pert)
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
            val, u = self._local_search(prep, vi, lin, g, budget, kmax, u0)
            if val < best_val:
                best_val, best_u = val, u
        return best_val + const, best_u

    @staticmethod
    def _local_search(prep: _Prepared, vi: int, lin: NDArray[np.float64], g: NDArray[np.float64],
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

    @staticmethod
    def _seed(prep: _Prepared, model: _InnerModel, u: NDArray[np.int64], kmax: int) -> None:
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

    def _inner(self, problem: HalfspaceProblem, prep: _Prepared, vi: int,
               pert: Perturbation, cutoff: float, time_left: float,
               u_start: NDArray[np.int64] | None = None, *, lp_only: bool = False,
               skip_lp: bool = False, lp_threshold: float | None = None,
               exclude: list[NDArray[np.int64]] | None = None,
               tilt: tuple[NDArray[np.int64], float] | None = None,
               ) -> tuple[str, float, NDArray[np.int64] | None, float]:
        """Solve the inner MIP for candidate vi: (status, value, u, dual bound).

        ``cutoff``: HiGHS's objective bound (nodes whose bound is above it are discarded).
        Status "lp_pruned": the LP relaxation's rigorous bound is above ``lp_threshold``
        (default: the cutoff), so no point of vi is (no MIP).
        ``lp_only``: return ("lp_bound", inf, None, that bound) (-inf if the LP failed).
        ``skip_lp``: go straight to the MIP (the LP bound is already known).
        ``exclude``: values of u cut off by no-good rows (added for this MIP only).
        ``tilt = (c, eps)``: the MIP minimizes ``F(u) - eps #{j: u_j != c_j}`` instead
        (every other point gains at least eps on c; the LP bound is of F itself).

        Values include every constant, i.e. they are objective values F(v, u).
        The model of vi is built on first use and kept: between noise draws only
        the costs of the one-hot values of u and of the norm encoding change.
        """
        import highspy

        sp = problem.space
        cap, kmax = sp.k_norm2_max, sp.k_max
        with self._lock:
            model = prep.models.get(vi)
            if model is None:
                model = self._build_inner(problem, prep, vi)
                if len(prep.models) >= self.max_models:  # bounded memory: drop the oldest
                    prep.models.pop(next(iter(prep.models)))
                prep.models[vi] = model
        h = model.highs
        lin, g, budget, const_pert = self._terms(problem, prep, vi, pert)
        rho_cost = np.zeros(cap)
        rho_cost[:budget] = np.diff(g[: budget + 1])
        ub = np.ones(cap)
        ub[budget:] = 0.0
        const = model.const_loss + const_pert
        upd = np.concatenate([model.z_index.ravel(), model.rho_index])
        h.changeColsCost(len(upd), upd.astype(np.int32), np.concatenate([lin.ravel(), rho_cost]))
        h.changeColsBounds(cap, model.rho_index.astype(np.int32), np.zeros(cap), ub)
        if lp_only or (self.lp_prune and not skip_lp and math.isfinite(cutoff)):
            # LP relaxation first (milliseconds): if its rigorous dual bound reaches the
            # cutoff, no point of this v beats the incumbent and the MIP is not needed.
            cost = model.cost0.copy()
            cost[model.z_index.ravel()] = lin.ravel()
            cost[model.rho_index] = rho_cost
            col_ub = model.col_ub.copy()
            col_ub[model.rho_index] = ub
            h.setOptionValue("solve_relaxation", True)
            h.setOptionValue("time_limit", max(time_left, 1e-3))
            t_lp = time.perf_counter()
            try:
                self._run(h)
                lp_ok = h.getModelStatus() == highspy.HighsModelStatus.kOptimal
                y = np.asarray(h.getSolution().row_dual, dtype=np.float64) if lp_ok else None
            finally:
                h.setOptionValue("solve_relaxation", False)
                time_left -= time.perf_counter() - t_lp
            lp_bound = -math.inf
            if y is not None and len(y) == model.A.shape[0]:
                lp_bound = self._dual_bound(model, cost, col_ub, y) + const
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
            self._seed(prep, model, u_start, kmax)  # a feasible point: HiGHS starts from it
        h.setOptionValue("objective_bound", float(cutoff - const) if math.isfinite(cutoff)
                         else highspy.kHighsInf)
        h.setOptionValue("time_limit", max(time_left, 1e-3))
        n_rows = h.getNumRow()
        m = len(prep.cat_cols)
        for x in exclude:  # sum_j z_{j, x_j} <= m - 1: any u but x
            cols = model.z_index[np.arange(m), np.asarray(x, dtype=np.int64) + kmax]
            h.addRow(-highspy.kHighsInf, float(m - 1), m, cols.astype(np.int32), np.ones(m))
        try:
            self._run(h)
            st = h.getModelStatus()
            info = h.getInfo()
            dual = float(info.mip_dual_bound) + const
            value = float(info.objective_function_value) + const
            u = None
            if info.primal_solution_status == 2:  # a feasible point exists
                x = np.asarray(h.getSolution().col_value)
                u = np.rint(x[model.u_index]).astype(np.int64)
            status_text = h.modelStatusToString(st)
        finally:
            if exclude:  # (changing the model clears HiGHS's solution: read first)
                h.deleteRows(len(exclude),
                             np.arange(n_rows, n_rows + len(exclude), dtype=np.int32))
        if st == highspy.HighsModelStatus.kOptimal and u is not None:
            return "optimal", value, u, dual
        if st in (highspy.HighsModelStatus.kObjectiveBound, highspy.HighsModelStatus.kInfeasible):
            return "pruned", math.inf, None, cutoff  # nothing below the cutoff for this v
        if st == highspy.HighsModelStatus.kTimeLimit:
            if u is not None:  # a feasible incumbent exists
                return "time_limit", value, u, dual
            return "time_limit", math.inf, None, dual
        return f"error:{status_text}", math.inf, None, -math.inf

    @staticmethod
    def _run(h: Any) -> None:
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

    # ------------------------------------------------------------------ solve
    def solve(self, problem: HalfspaceProblem,
              eta: NDArray[np.floating] | Perturbation) -> OracleResult:
        """Minimize loss + perturbation exactly (eta: OPDisc's noise vector, or a Perturbation)."""
        t0 = time.perf_counter()
        pert = as_perturbation(problem.space, eta)
        prep = self.prepare(problem)
        t_prep = time.perf_counter() - t0
        ex = ExactObjective(problem, pert)
        tol = ex.tolerance()
        band = 2.0 * tol  # float values further than this above the best are certainly worse
        zero = ex.zero_noise  # no noise: F is an integer, computed exactly
        # a candidate v is discarded when a bound on it exceeds best + gap: with noise, the
        # bound minus its float error is then above the incumbent's exact objective; with no
        # noise, it cannot hold a point better by 1 (an integer loss)
        gap = (-1.0 + 1e-6) if zero else band
        lb = self._lower_bounds(problem, prep, pert)
        order = np.argsort(lb, kind="stable")
        best_val = math.inf
        best_k: NDArray[np.int64] | None = None
        # every evaluated point within the band of the incumbent (exact decision at the end),
        # and per outer candidate the values of u evaluated so far (excluded from its MIPs)
        cands: list[tuple[NDArray[np.int64], float]] = []
        known: dict[int, list[tuple[NDArray[np.int64], float]]] = {}

        def found(vi: int, u: NDArray[np.int64], val: float) -> None:
            nonlocal best_val, best_k
            if val <= best_val + band:  # re-evaluated from the data (loss in integers)
                k = self._assemble(problem, prep, vi, u)
                val = float(problem.objective_k(k, pert)[0])
                if val <= best_val + band:
                    cands.append((k, val))
                if val < best_val:
                    best_val, best_k = val, k
            known.setdefault(vi, []).append((u, val))

        # Phase 1 (heuristic, exact values of feasible points): local search on the most
        # promising candidates gives a strong incumbent before any MIP is solved.
        seeds: dict[int, tuple[float, NDArray[np.int64]]] = {}
        pool: list[NDArray[np.int64]] = []
        for vi in order[: self.heuristic_candidates]:
            if lb[vi] > best_val + gap:
                break
            val, u = self._heuristic(problem, prep, int(vi), pert, pool[-3:])
            seeds[int(vi)] = (val, u)
            improves = val < best_val
            found(int(vi), u, val)
            if improves:
                pool.append(u)
        open_bound = math.inf  # min bound over candidates not closed
        status = OracleStatus.OPTIMAL
        n_inner = 0
        n_lp_pruned = 0
        # candidate -> lower bound HiGHS proved on its points other than the known ones
        unsettled: dict[int, float] = {}
        m_cat = len(prep.cat_cols)

        deadline = t0 + self.time_limit

        def question(vi: int, u_start: NDArray[np.int64] | None,
                     skip_lp: bool) -> dict[str, Any]:
            """One MIP for candidate vi.  With noise: is there a point of vi, other than the
            known ones, whose objective may lie below the incumbent plus the band and HiGHS's
            window?  The best known point c of vi below that cutoff is kept out by a tilt
            (every other point is rewarded eps per coordinate differing from c, and the
            question asked eps lower), the other known points by no-good rows.  A question
            asked with an incumbent that has since improved is only wider: its answer
            stays true."""
            unsettled.pop(vi, None)
            tilt = None
            exclude: list[NDArray[np.int64]] = []
            if zero:  # integer objective: anything below the incumbent is below it by 1
                cutoff = best_val
            else:
                cutoff = best_val + 3.0 * tol + _HIGHS_TIE_WINDOW
                pts = [(u, val) for u, val in known.get(vi, []) if val < cutoff]
                if pts:
                    c, val_c = min(pts, key=lambda p: p[1])
                    eps = 2.0 * (3.0 * tol + _HIGHS_TIE_WINDOW) + (val_c - best_val)
                    tilt = (c, eps)
                    cutoff -= eps
                    exclude = [u for u, val in known[vi] if u is not c
                               and val - eps * m_cat < cutoff + _HIGHS_TIE_WINDOW]
            if u_start is None and tilt is not None:
                u_start = tilt[0]  # a feasible start for HiGHS (above the tilted cutoff)
            return {"vi": vi, "cutoff": cutoff, "tilt": tilt, "exclude": exclude,
                    "u_start": u_start, "skip_lp": skip_lp or tilt is not None,
                    "lp_threshold": best_val + gap}

        def solve_q(q: dict[str, Any]) -> tuple[str, float, NDArray[np.int64] | None, float]:
            time_left = deadline - time.perf_counter()
            return self._inner(problem, prep, q["vi"], pert, q["cutoff"], max(time_left, 1e-3),
                               q["u_start"], skip_lp=q["skip_lp"],
                               lp_threshold=q["lp_threshold"], exclude=q["exclude"],
                               tilt=q["tilt"])

        def answer(q: dict[str, Any],
                   res: tuple[str, float, NDArray[np.int64] | None, float]) -> str:
            nonlocal n_inner, n_lp_pruned, status, open_bound
            vi, cutoff, tilt, exclude = q["vi"], q["cutoff"], q["tilt"], q["exclude"]
            st, _, u, dual = res
            n_inner += st != "lp_pruned"
            n_lp_pruned += st == "lp_pruned"
            if st == "optimal" and u is not None:
                val = float(problem.objective_k(self._assemble(problem, prep, vi, u), pert)[0])
                fval = val
                if tilt is not None:
                    fval -= tilt[1] * int(np.count_nonzero(u != tilt[0]))
                if any(np.array_equal(u, x) for x in exclude):
                    status = OracleStatus.ERROR  # HiGHS broke a no-good row: refuse
                elif fval >= cutoff:
                    pass  # HiGHS's best point of the rest is above the cutoff: settled
                elif zero:
                    found(vi, u, val)  # an integer objective: HiGHS's optimum is exact
                else:
                    # every other point of vi has (tilted) objective >= fval - window
                    found(vi, u, val)
                    unsettled[vi] = fval - _HIGHS_TIE_WINDOW + (0.0 if tilt is None
                                                                else tilt[1])
            elif st == "time_limit":
                status = OracleStatus.TIME_LIMIT
                if u is not None:
                    val = float(problem.objective_k(self._assemble(problem, prep, vi, u),
                                                    pert)[0])
                    found(vi, u, val)
                open_bound = min(open_bound, max(dual, float(lb[vi])))
            elif st.startswith("error"):
                status = OracleStatus.ERROR
                open_bound = min(open_bound, float(lb[vi]))
            return st

        def ask(vi: int, u_start: NDArray[np.int64] | None = None,
                skip_lp: bool = False) -> str:
            q = question(vi, u_start, skip_lp)
            return answer(q, solve_q(q))

        # Phase 1b (bounds only): the LP relaxation's rigorous bound of every candidate still
        # below the incumbent (milliseconds each, ``workers`` at once), then re-order: the
        # stronger bound prunes more and visits the truly promising candidates first, so the
        # incumbent improves early.
        lp_done: set[int] = set()
        if self.lp_prune:
            lb = lb.copy()
            todo_lp = [int(vi) for vi in order[: int(np.searchsorted(lb[order], best_val + gap,
                                                                     side="right"))]]

            def lp_bound(vi: int) -> tuple[str, float]:
                time_left = deadline - time.perf_counter()
                if time_left <= 0:
                    return "time", -math.inf
                st, _, _, bnd = self._inner(problem, prep, vi, pert, best_val, time_left,
                                            lp_only=True)
                return st, bnd

            for vi, (st, bnd) in zip(todo_lp, self._map(lp_bound, todo_lp), strict=True):
                if st == "lp_bound":
                    lp_done.add(vi)
                    lb[vi] = max(float(lb[vi]), bnd)
            order = np.argsort(lb, kind="stable")
        # Phase 2 (exact): best-first over candidates, inner MIP with the incumbent (plus the
        # float band and HiGHS's tolerance window) as cutoff and the known points of the
        # candidate kept out, ``workers`` candidates at once.  A candidate is *settled* when
        # HiGHS finds nothing else below the cutoff; one where HiGHS found a point is asked
        # again at the end (tie check).
        pos = 0
        while pos < len(order):
            batch: list[int] = []
            while (pos < len(order) and len(batch) < self.workers
                   and lb[order[pos]] <= best_val + gap):
                batch.append(int(order[pos]))
                pos += 1
            if not batch:
                break
            if deadline - time.perf_counter() <= 0:
                status = OracleStatus.TIME_LIMIT
                open_bound = min(open_bound, float(lb[batch].min()))
                break
            qs = []
            for vi in batch:
                seed = seeds.get(vi)
                u_start = seed[1] if seed is not None and seed[0] < best_val + band else None
                qs.append(question(vi, u_start, vi in lp_done))
            sts = [answer(q, r) for q, r in zip(qs, self._map(solve_q, qs), strict=True)]
            if "time_limit" in sts:
                open_bound = min(open_bound, float(lb[order[pos:]].min(initial=math.inf)))
                break
        # Tie check: HiGHS's optimum u of a candidate proves nothing about other points of
        # that candidate within its tolerance window: ask again, u kept out, wherever the
        # window reaches the band of the final incumbent.
        tie_solves = 0
        while status is OracleStatus.OPTIMAL:
            todo = [vi for vi, low in unsettled.items() if low - 2.0 * tol <= best_val]
            if not todo:
                break
            vi = todo[0]
            if tie_solves >= _TIE_MAX_SOLVES:
                status = OracleStatus.GAP  # refuse rather than loop
                break
            if deadline - time.perf_counter() <= 0:
                status = OracleStatus.TIME_LIMIT
                break
            tie_solves += 1
            ask(vi, skip_lp=True)
        decided = False
        near_ties = 0
        if status is OracleStatus.OPTIMAL and zero and best_k is not None:
            decided = True  # integer objective: the incumbent's value is the proven minimum
        elif status is OracleStatus.OPTIMAL and cands:
            keep = [c for c in cands if c[1] <= best_val + band]
            K = np.array([c[0] for c in keep], dtype=np.int64)
            i, near_ties = ex.argmin(K, np.array([c[1] for c in keep]), tol=tol)
            if i is not None:
                best_k, decided = K[i], True
        bound = min(best_val, open_bound)
        n_lp_pruned += sum(1 for vi in lp_done if lb[vi] > best_val + gap)
        return make_result(
            problem, eta, best_k, bound, status, time.perf_counter() - t0, self.name,
            exact=decided, inner_solves=n_inner, lp_pruned=n_lp_pruned, candidates=len(order),
            prepare_s=t_prep, tie_solves=tie_solves, near_ties=near_ties,
        )

    @staticmethod
    def _assemble(problem: HalfspaceProblem, prep: _Prepared, vi: int,
                  u: NDArray[np.int64]) -> NDArray[np.int64]:
        k = np.zeros(problem.d, dtype=np.int64)
        k[prep.num_cols] = prep.V[vi]
        k[prep.cat_cols] = u
        return k
