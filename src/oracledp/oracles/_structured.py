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
   duals (valid for any multipliers, so no trust in the solver's tolerances) or the
   *coupled Lagrangian bound* below is above the incumbent; otherwise the inner MIP runs
   with a cutoff; the search stops when every remaining bound is above the incumbent.

   **Coupled Lagrangian bound** (:func:`~oracledp.oracles._structured_tables.coupled_bound`).
   For fixed v, with A the cells x binary-columns membership matrix, t = A u, ``lin_j``
   the value costs of u_j, g the norm cost of ||u||^2 and any multipliers lambda (one per
   cell), mu = A^T lambda::

       F(v, u) = sum_c [f_c(t_c) - lambda_c t_c] + sum_j [lin_j(u_j) + mu_j u_j]
                 + g(||u||^2) + const

   holds for every u: ``sum_c lambda_c t_c = lambda^T A u = sum_j mu_j u_j``, so the two
   lambda terms cancel, whatever lambda is.  Hence min_u F(v, u) is at least the sum of
   each cell's minimum over its reachable range |t_c| <= T_c (Cauchy-Schwarz on the norm
   budget) plus the exact minimum of the second line over the norm budget (the dynamic
   program of (b), with costs ``lin_j(a) + mu_j a``): the cells are decoupled from each
   other but coupled to the numeric candidate's norm budget through mu.  lambda = 0 is
   bound (a)+(b); with lambda = minus the LP's optimal duals of the link rows
   ``t_c = sum_j u_j`` it is at least the LP's value up to the LP's tolerances (each part is
   then minimized over the integers instead of over the LP's relaxation of it).  Before any
   other LP, the LP of the best-bound candidate prices the cells once, and its multipliers
   give every other candidate a coupled bound (valid for any multipliers, however far from
   optimal for that candidate): candidates it prunes need neither an inner model nor an LP.  Validity needs nothing from the solver:
   lambda is rounded to multiples of 2^-20 of magnitude at most 2^16 so that mu is computed
   exactly (every partial sum is such a multiple below 2^53 times 2^-20, for fewer than 2^16
   cells), and the float sum is lowered by an allowance ``(n + 16) 2^-50 (1 + M)`` (n: cells
   plus binary columns, M: the sum of the magnitudes summed), 8 times the worst rounding
   error of those at most n + 4 sums; the float band of the exact comparison (below)
   covers the rest, as for every other bound here.
5. **Exact certificate** (see :mod:`oracledp.oracles._base`).  With ``tol`` the float
   band of :mod:`oracledp.oracles._exact` and ``w`` HiGHS's tolerance window
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
   incumbent (a better point is better by 1) and no tie check is needed; ties are then
   everywhere, and the search proves the minimum value F only.  The point returned is
   the first point of value F that the search reaches (an exact minimizer, as the
   branch-and-bound and the monolithic oracle return; enumeration returns the smallest
   k).  With no noise the candidates are asked in batches of fixed size
   (:data:`_WORK_BATCH`) whatever ``workers`` is, so the search, hence the point, does not
   depend on ``workers`` (HiGHS runs with one thread per model: deterministic).  A former
   rule, the lexicographically smallest k of value F found coordinate by coordinate,
   cost one hard MIP per coordinate and candidate (on Adult, 21 MIPs and about 30 s of
   CPU where the search itself took 2 MIPs), for a non-private fit only.
   A search stopped by the time limit (or a tie check that does not finish) is not
   certified.

The inner model is built once per problem and reused for every v and every
noise draw: only objective coefficients and a few column bounds change.

The method needs the binary columns to take values in {0, 1} and at most
``max_candidates`` outer candidates v (:func:`numeric_candidates`, counted exactly by a
dynamic program: a public quantity of the schema and W); :func:`structured_applicable`
says whether it applies.

**Work limit.**  ``work_limit`` counts LP relaxations, MIP solves and their nodes
(HiGHS's ``mip_node_count``).  The search stops, not certified, before a step that starts
with the count at the limit; each MIP gets the work left when its batch starts as HiGHS's
``mip_max_nodes``.  With a work limit the candidates are asked in batches of fixed size
(:data:`_WORK_BATCH`) whatever ``workers`` is, and HiGHS runs with one thread per model
(deterministic), so the count and the outcome are the same on any machine, load or number
of workers.  The heuristic phase and the tables are not counted (deterministic and bounded
by the number of candidates).  Scores are integers (see :mod:`oracledp.oracles._halfspace`), and the final
point is re-evaluated in integer arithmetic by :func:`~oracledp.oracles._base.make_result`.

The parts live in private modules: :mod:`oracledp.oracles._structured_tables` (outer
candidates, loss tables, lower bounds), :mod:`oracledp.oracles._structured_model` (the inner
HiGHS model and its LP-dual bound), :mod:`oracledp.oracles._structured_inner` (one inner
problem: its LP bounds, then its MIP), :mod:`oracledp.oracles._structured_heuristic` (local
search) and :mod:`oracledp.oracles._pool` (the worker threads); this module holds the search.
"""

from __future__ import annotations

import math
import threading
import time
import weakref
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
from oracledp.oracles._halfspace import HalfspaceProblem, Perturbation, as_perturbation
from oracledp.oracles._pool import _DaemonPool
from oracledp.oracles._structured_heuristic import heuristic
from oracledp.oracles._structured_inner import solve_inner
from oracledp.oracles._structured_model import _InnerModel, build_inner, dual_bound
from oracledp.oracles._structured_tables import (
    _enumerate_ball,
    _Prepared,
    count_ball,
    coupled_bound,
    loss_tables,
    lower_bounds,
    terms,
)

# HiGHS discards points up to its MIP feasibility tolerance (1e-6, the default here) below an
# incumbent or an objective bound (HighsMipSolverData::computeNewUpperLimit); every question
# to HiGHS reaches this much further (covering that and its LP tolerances: trusted)
_HIGHS_TIE_WINDOW = 1e-5
_TIE_MAX_SOLVES = 8  # tie-check solves per call before refusing
_PRESOLVE_ABOVE_NORM2 = 4
"""The inner MIPs run with HiGHS's presolve when W's largest ||k||^2 exceeds this (or with no
noise), without it on the compact W (speed only).  Measured on 2026-11-28 (CPU seconds, cold,
eps 1 and 2, 3 draws each; docs/results/oracle-adult/same-run-2026-11-28): compact W
(||k||^2 <= 4) without / with presolve: health_insurance RSPM 42 / 93, health_insurance OPDisc
26 / 37, doctor_visits OPDisc 29 / 35; Adult with the ICML 2020 W (||k||^2 <= 23), median wall
seconds over 20 noisy draws, 2 workers: 8.6 s without at eps 1 (5.1 with), all eps 5.10 / 4.13;
Adult with no noise 10.2 / 6.9 CPU s."""


MAX_CANDIDATES = 10_000
"""Default cap on the number of outer candidates v (:func:`numeric_candidates`): building the
loss tables took 3-4 s at 6,561 candidates and 44-56 s at 17-34k on the bundled wide tables."""

DEFAULT_WORK_LIMIT = 3_000
"""The work limit of the estimators' default (LP relaxations + MIP solves + nodes): about
1.5 minutes of a quiet 2-core machine (benchmarks/work_rate.py, 2026-11-28, load 0.5-1.1:
31.9 work per second on Adult, so 94 s; docs/results/work-rate); the most any certified
Adult draw used is about 400.  Deterministic, unlike a time limit: whether a fit certifies does not depend on the
machine or its load."""

_WORK_BATCH = 2
"""Outer candidates asked per batch when a work limit is set or there is no noise, whatever
``workers`` is: the search, hence its work count, whether it certifies and (with no noise)
which minimizer it returns, is then the same on any machine."""


def numeric_candidates(problem: HalfspaceProblem) -> int:
    """The number of outer candidates v of the decomposition: integer vectors over the
    non-binary columns with |v_j| <= k_max and ||v||^2 <= the squared radius of W, counted
    exactly (nothing enumerated).  Public: it reads only the declared 0/1 columns and W."""
    sp = problem.space
    n_num = int((~problem.binary_columns).sum())
    return count_ball(n_num, sp.k_max, sp.k_norm2_max)


def structured_applicable(problem: HalfspaceProblem,
                          max_candidates: int = MAX_CANDIDATES) -> bool:
    """Whether the decomposition applies: at most ``max_candidates`` outer candidates
    (:func:`numeric_candidates`), the other columns binary."""
    return numeric_candidates(problem) <= max_candidates


class StructuredOracle:
    """Exact oracle by tabular decomposition, with HiGHS for the inner problems.

    Parameters
    ----------
    time_limit:
        Seconds for one solve (all inner MIPs together).  On expiry the result
        is not certified.
    threads:
        Threads for HiGHS (1 = deterministic and what the benchmarks use).
    max_candidates:
        Largest number of outer candidates v accepted (:func:`numeric_candidates`; the loss
        tables hold one row per candidate).
    work_limit:
        Deterministic limit on one solve, counted in LP relaxations solved plus MIP
        solves plus their branch-and-bound nodes (None: no limit).  A solve started under
        the limit is capped (HiGHS's ``mip_max_nodes``) at the work left when its batch
        starts; once the count reaches the limit the search stops, not certified.  With a
        work limit, candidates are asked in batches of a fixed size (2) whatever
        ``workers`` is, so the work count and whether a solve certifies are the same for any
        ``workers`` and any machine (with ``threads=1``, HiGHS is deterministic); the time
        limit still applies as a safety net.
    coupled_bound:
        After each LP relaxation, also evaluate the coupled Lagrangian bound (step 4) with
        the LP's link-row duals as multipliers (speed only, never the answer).
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
        a certified answer is the exact argmin whatever ``workers`` is, ties included (the
        smallest k; with no noise, where a batch may reach another of the many equal
        minimizers first, the tie rule is applied after the search); speed only, what an
        uncertified, time-limited search holds may differ.
    """

    name = "highs-structured"

    def __init__(self, *, time_limit: float = 60.0, threads: int = 1,
                 max_candidates: int = MAX_CANDIDATES, work_limit: int | None = None,
                 heuristic_candidates: int = 20, max_models: int = 1024,
                 lp_prune: bool = True, coupled_bound: bool = True, workers: int = 1,
                 verbose: bool = False) -> None:
        self.time_limit = check_time_limit(time_limit)
        self.work_limit = check_work_limit(work_limit)
        self.threads = int(threads)
        self.max_candidates = int(max_candidates)
        self.coupled_bound = bool(coupled_bound)
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
        if not structured_applicable(problem, self.max_candidates):
            raise ValueError(
                f"the tabular decomposition takes at most {self.max_candidates} numeric "
                f"candidates, this problem has {numeric_candidates(problem)}; use the "
                "branch-and-bound formulation"
            )
        sp = problem.space
        kmax, cap = sp.k_max, sp.k_norm2_max
        binary = problem.binary_columns
        num_cols = np.flatnonzero(~binary)
        cat_cols = np.flatnonzero(binary)
        V = _enumerate_ball(len(num_cols), kmax, cap)
        Vn2 = (V**2).sum(axis=1)
        # the 0/1 columns (entries 0 or Q) as int8, in blocks of rows: no int64 copy of them
        B = np.empty((problem.N.shape[0], len(cat_cols)), dtype=np.int8)
        for a in range(0, B.shape[0], 1 << 16):
            B[a:a + (1 << 16)] = problem.N[a:a + (1 << 16), cat_cols] // problem.Q
        if 0 < B.shape[1] <= 62:
            # np.unique(B, axis=0, return_inverse=True) for rows of 0/1 (the same sorted
            # cells, the same inverse): a row's lexicographic rank is that of its bits read
            # as one binary number, so unique int64 keys replace the sort of byte rows
            key = np.zeros(B.shape[0], dtype=np.int64)
            for j in range(B.shape[1]):
                key <<= 1
                key |= B[:, j]
            _, first, cell_of_group = np.unique(key, return_index=True, return_inverse=True)
            del key
            cells = B[first]
        else:
            cells, cell_of_group = np.unique(B, axis=0, return_inverse=True)
        del B
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

    # the steps, implemented in the private modules; kept as methods (tests and
    # benchmarks/bound_gap.py call them on the oracle)
    _loss_tables = staticmethod(loss_tables)

    def _build_inner(self, problem: HalfspaceProblem, prep: _Prepared, vi: int) -> _InnerModel:
        """Build the inner MIP for candidate vi (:func:`oracledp.oracles._structured_model.build_inner`)."""
        return build_inner(problem, prep, vi, verbose=self.verbose, threads=self.threads)

    _dual_bound = staticmethod(dual_bound)
    _coupled_bound = staticmethod(coupled_bound)
    _lower_bounds = staticmethod(lower_bounds)
    _terms = staticmethod(terms)
    _heuristic = staticmethod(heuristic)

    def _inner(self, problem: HalfspaceProblem, prep: _Prepared, vi: int,
               pert: Perturbation, cutoff: float, time_left: float,
               u_start: NDArray[np.int64] | None = None, **options: Any,
               ) -> tuple[str, float, NDArray[np.int64] | None, float]:
        """The inner problem of candidate vi on its kept model, with this oracle's LP pruning
        and coupled bound (:func:`~oracledp.oracles._structured_inner.solve_inner`, which
        describes ``options`` and the result)."""
        return solve_inner(problem, prep, self._inner_model(problem, prep, vi), vi, pert,
                           cutoff, time_left, u_start, lp_prune=self.lp_prune,
                           coupled=self.coupled_bound, **options)

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
        # no noise: F is an integer, computed exactly
        zero = ex.zero_noise
        # HiGHS's presolve for the inner MIPs (speed only, never the answer): on with no noise
        # and on a large W, off on a compact one (:data:`_PRESOLVE_ABOVE_NORM2`)
        presolve = zero or problem.space.k_norm2_max > _PRESOLVE_ABOVE_NORM2
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
        limit = self.work_limit
        work_done = 0  # LP relaxations + MIP solves + their nodes (the work limit's count)
        # fixed batches with a work limit (the count the same on any machine) and with no
        # noise (the first minimizer reached the same for any workers: module docstring)
        batch_size = self.workers if (limit is None and not zero) else _WORK_BATCH

        def work_left() -> int | None:
            return None if limit is None else limit - work_done

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
                    "lp_threshold": best_val + gap, "node_limit": work_left(), "work": []}

        def solve_q(q: dict[str, Any]) -> tuple[str, float, NDArray[np.int64] | None, float]:
            time_left = deadline - time.perf_counter()
            return self._inner(problem, prep, q["vi"], pert, q["cutoff"], max(time_left, 1e-3),
                               q["u_start"], skip_lp=q["skip_lp"],
                               lp_threshold=q["lp_threshold"], exclude=q["exclude"],
                               tilt=q["tilt"], node_limit=q["node_limit"], work=q["work"],
                               presolve=presolve)

        def answer(q: dict[str, Any],
                   res: tuple[str, float, NDArray[np.int64] | None, float]) -> str:
            nonlocal n_inner, n_lp_pruned, status, open_bound, work_done
            vi, cutoff, tilt, exclude = q["vi"], q["cutoff"], q["tilt"], q["exclude"]
            st, _, u, dual = res
            work_done += sum(q["work"])
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
            elif st in ("time_limit", "work_limit"):
                status = (OracleStatus.TIME_LIMIT if st == "time_limit"
                          else OracleStatus.WORK_LIMIT)
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
            if self.coupled_bound and len(order) > 1 and deadline > time.perf_counter():
                # one LP (the best-bound candidate's) prices the cells; its multipliers give
                # every other candidate a coupled bound (valid for any multipliers) before
                # any model of theirs is built
                v0 = int(order[0])
                w0: list[int] = []
                lam0: list[NDArray[np.float64]] = []
                _, _, _, b0 = self._inner(problem, prep, v0, pert, best_val,
                                          deadline - time.perf_counter(), lp_only=True,
                                          work=w0, duals=lam0)
                work_done += sum(w0)
                if math.isfinite(b0):
                    lp_done.add(v0)
                    lb[v0] = max(float(lb[v0]), b0)
                if lam0:
                    for vi in order[1: int(np.searchsorted(lb[order], best_val + gap,
                                                           side="right"))]:
                        lin_v, g_v, budget_v, const_v = self._terms(problem, prep, int(vi), pert)
                        lb[vi] = max(float(lb[vi]), self._coupled_bound(
                            problem, prep, int(vi), lam0[0], lin_v, g_v, budget_v, const_v))
                order = np.argsort(lb, kind="stable")
            todo_lp = [int(vi) for vi in order[: int(np.searchsorted(lb[order], best_val + gap,
                                                                     side="right"))]
                       if int(vi) not in lp_done]
            if limit is not None:  # the first ones only, best bound first (deterministic)
                todo_lp = todo_lp[: max(0, limit - work_done)]

            def lp_bound(vi: int) -> tuple[str, float, int]:
                time_left = deadline - time.perf_counter()
                if time_left <= 0:
                    return "time", -math.inf, 0
                w: list[int] = []
                st, _, _, bnd = self._inner(problem, prep, vi, pert, best_val, time_left,
                                            lp_only=True, work=w)
                return st, bnd, sum(w)

            for vi, (st, bnd, w) in zip(todo_lp, self._map(lp_bound, todo_lp), strict=True):
                work_done += w
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
            while (pos < len(order) and len(batch) < batch_size
                   and lb[order[pos]] <= best_val + gap):
                batch.append(int(order[pos]))
                pos += 1
            if not batch:
                break
            timed_out = deadline - time.perf_counter() <= 0
            if timed_out or (limit is not None and work_done >= limit):
                status = OracleStatus.TIME_LIMIT if timed_out else OracleStatus.WORK_LIMIT
                open_bound = min(open_bound, float(lb[batch].min()))
                break
            qs = []
            for vi in batch:
                seed = seeds.get(vi)
                u_start = seed[1] if seed is not None and seed[0] < best_val + band else None
                qs.append(question(vi, u_start, vi in lp_done))
            sts = [answer(q, r) for q, r in zip(qs, self._map(solve_q, qs), strict=True)]
            if "time_limit" in sts or "work_limit" in sts:
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
            if limit is not None and work_done >= limit:
                status = OracleStatus.WORK_LIMIT
                break
            tie_solves += 1
            ask(vi, skip_lp=True)
        decided = False
        near_ties = 0
        if status is OracleStatus.OPTIMAL and zero and best_k is not None:
            # integer objective: best_val is the proven minimum and best_k a point of it
            decided = True
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
            work=work_done,
        )

    def _inner_model(self, problem: HalfspaceProblem, prep: _Prepared, vi: int) -> Any:
        """The inner model of outer candidate ``vi``, built once and kept (at most
        ``max_models``, the oldest dropped first)."""
        with self._lock:
            model = prep.models.get(vi)
            if model is None:
                model = self._build_inner(problem, prep, vi)
                if len(prep.models) >= self.max_models:  # bounded memory: drop the oldest
                    prep.models.pop(next(iter(prep.models)))
                prep.models[vi] = model
        return model

    @staticmethod
    def _assemble(problem: HalfspaceProblem, prep: _Prepared, vi: int,
                  u: NDArray[np.int64]) -> NDArray[np.int64]:
        k = np.zeros(problem.d, dtype=np.int64)
        k[prep.num_cols] = prep.V[vi]
        k[prep.cat_cols] = u
        return k
