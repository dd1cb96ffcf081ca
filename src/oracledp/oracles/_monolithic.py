"""Exact monolithic MIP oracle for the 0/1-loss halfspace problem (HiGHS or OR-Tools CP-SAT).

Problem (integer coordinates ``k``, ``w = tau * k``, see :mod:`oracledp.oracles._halfspace`)::

    min_k  sum_g [ n_pos_g * 1(S_g <= 0) + n_neg_g * 1(S_g >= 0) ]  -  <eta, pi_k(k)>
    S_g = N_g . k (an integer),  |k_j| <= k_max,  ||k||^2 <= k_norm2_max,
    pi_k(k) = (k / sqrt(K2), sqrt(1 - ||k||^2 / K2)),  K2 = space.max_k_norm2.

Formulation (every variable integer, every constraint coefficient an exact integer;
only the objective carries the floating-point noise ``eta``):

* ``k_j`` integer in ``[-k_max, k_max]``, objective ``-eta_j / sqrt(K2)``;
* ``z_{j,a}`` binary for ``a in {+-1, ..., +-k_max}``: ``sum_a z_{j,a} <= 1`` and
  ``k_j = sum_a a z_{j,a}`` (``k_j = 0`` when every ``z_{j,.}`` is 0);
* ``u_v`` binary, one per *attainable* squared norm ``v`` (sums of ``d`` squares
  ``<= k_norm2_max``, at most ``K2 + 1`` values): ``sum_v u_v = 1`` and
  ``sum_{j,a} a^2 z_{j,a} = sum_v v u_v``; objective ``-eta_last sqrt(1 - v/K2)`` on
  ``u_v``.  The norm constraint is implied (every listed ``v`` is allowed), and the
  one-hot handles either sign of ``eta_last`` (the term is concave or convex in v);
* per group ``g`` with ``n_pos_g > 0`` a binary ``a_g`` (``a_g = 1`` forces
  ``S_g >= 1``: the positives are correct), with ``n_neg_g > 0`` a binary ``b_g``
  (``b_g = 1`` forces ``S_g <= -1``), ``a_g + b_g <= 1``; the loss is
  ``n_total - sum n_pos_g a_g - sum n_neg_g b_g``.  ``S_g = 0`` satisfies neither,
  so a point on the hyperplane is an error for both labels (sgn(0) = 0).
  HiGHS gets big-M rows ``S_g - (1 + M_g) a_g >= -M_g`` and
  ``S_g + (1 + M_g) b_g <= M_g`` with the exact integer bound
  ``M_g = min(sum_j |N_gj| k_max, isqrt(||N_g||^2 k_norm2_max)) >= |S_g|`` (box and
  Cauchy-Schwarz); CP-SAT gets the same implications as enforcement literals.
  Groups whose row is all zero are always misclassified and get no variable.
  Exact presolve: each row is divided by the gcd of its entries (same sign of
  ``S_g`` for every k, and the margin ``S_g >= 1`` in reduced units is a tighter
  relaxation), and rows that then coincide (positive multiples of each other)
  are merged, adding their label counts.

Certification (exact: the released point is the exact argmin, see
:mod:`oracledp.oracles._base`).  A solver's floating-point "optimal" is not a
certificate; the exact decision comes from one of three sources, in this order
(``info["certificate"]`` says which):

1. ``"enumeration"`` (exact, either solver).  When W is small enough to enumerate
   (at most ``verify_max_points`` points and ``|W| x n x d`` within a budget of
   integer multiply-adds; public sizes only), the exact argmin over W is computed
   (scores and losses in int64 arithmetic, exact below 2^52; points within the float
   band of the minimum compared exactly by :mod:`oracledp.oracles._exact`).  If it is
   not the solver's point (or the solver failed without a point), it replaces it
   (``info["solver_point_rejected"] = True``).  Only a search stopped by the time limit
   is never certified.  The enumeration tables are built once per problem; each further
   eta costs one ``|W| x (d+1)`` product.
2. ``"solver bound"``: the solver's optimum, only where its bound is trusted, made exact
   by the *tie check* (:meth:`MonolithicMIPOracle._tie_check`): the solver is asked
   again, with no-good constraints excluding the known points and an objective bound of
   the incumbent plus the float band plus the solver's tolerance window (HiGHS:
   ``_HIGHS_TIE_WINDOW`` = 1e-5, covering its MIP feasibility tolerance 1e-6 by which it
   may discard points below an incumbent; CP-SAT: twice its rounding bound ``E / S``),
   until it finds nothing there; the points found are compared exactly.  "Nothing
   there" rests on the same trust as the solver's optimality.  With no noise the
   objective is an integer and the solver's optimum is exact without a tie check.
3. ``"none"``: otherwise the bound is set to -inf: never certified (status ``GAP``,
   ``info["reason"]`` says why, without any data value).

The solver bounds:

* HiGHS: ``info.mip_dual_bound`` (``mip_rel_gap = 0``, ``mip_abs_gap = 1e-9``).  It
  is computed in floating point (LP relaxations, presolve, propagation, cuts, all
  with tolerances), so it is **not a proof**; with large coefficients it is
  plainly wrong (fuzzing found 16 of 300 random tables with a common denominator
  Q in [1e10, 1e13] "optimal" with a bound above the true minimum).  It is trusted
  only on a *well-scaled* model, by this rule.  The tolerances are pinned
  (``mip_feasibility_tolerance = 1e-6``, ``primal_feasibility_tolerance = 1e-7``);
  let ``t = 1e-6`` be the larger, and ``L = max_r ||A_r||_1`` over the rows of the
  constraint matrix after the gcd reduction (every coefficient and every row bound
  is an exact integer).  HiGHS accepts points whose integer columns are within
  ``t`` of integers and whose rows and column bounds hold within ``t``.  Rounding
  such a point ``x`` to ``r`` moves each row activity by at most ``t ||A_r||_1``,
  so ``A_r r >= lo_r - t (1 + ||A_r||_1) > lo_r - 1`` (and likewise at ``hi_r``)
  whenever ``t (1 + L) < 1``; ``A_r r`` and ``lo_r`` are integers, so ``r`` is
  exactly feasible: in particular ``a_g = 1`` (``b_g = 1``) at ``r`` implies
  ``S_g >= 1`` (``S_g <= -1``) exactly.  So under ``t (1 + L) <= 1/2`` (a factor 2
  of margin) the tolerances cannot change any sign or indicator decision: the
  model HiGHS solves within its tolerances is a faithful relaxation of the exact
  one, and row activities stay below ``L k_max``, far from where double rounding
  (``~ L k_max 2^-53``) reaches the tolerances.  Outside this rule (``L`` above
  about 5e5, e.g. columns divided by large public maxima) HiGHS's bound is never
  used.  **What remains trusted** inside the rule: that HiGHS's branch-and-bound,
  run in floating point on such a well-scaled integer model, returns a valid bound
  for its tolerance model (the standard assumption of every floating-point MIP
  solver; no certificate checks it).  In fuzzing, HiGHS's wrong bounds appeared
  only with ``L`` above 1e9 (none in 400 tables with Q in [1e5, 1e10]); the rule
  stops more than three orders of magnitude lower.  Where this assumption is not
  acceptable use ``solver="cpsat"`` (exact integer arithmetic) or a W small enough
  for enumeration.
* CP-SAT: a floating-point objective would be scaled to integers internally
  (``mip_wanted_precision`` 1e-6) and "OPTIMAL" declared within
  ``absolute_gap_limit`` (default 1e-4 in OR-Tools 9.15), which is coarser than
  ``CERTIFY_ABS_TOL``.  So the scaling is done here, explicitly: the objective is
  multiplied by a power of two ``S`` (about ``1e9 (d k_max + 1)``, less if the
  objective's magnitude times ``S`` would pass 2^52) and the noise coefficients
  rounded to integers; the rounding changes the scaled objective of any feasible
  point by at most ``E = k_max sum_j |err_j| + max_v |err_v| <= (d k_max + 1) / 2``.
  CP-SAT then solves a pure integer problem exactly (gap limits 0), and its
  integer bound ``B`` gives the valid bound ``n_total + (B - E) / S`` on the true
  objective; at optimality the true gap is at most ``2 E / S`` (<= 1e-9).  CP-SAT
  reasons in exact integer arithmetic (its LP relaxations only guide the search;
  bounds derived from them are justified by exact integer combinations), so this
  bound is trusted at every scale; what remains trusted is the correctness of
  CP-SAT's implementation.  It solved every one of the fuzzed large-Q tables that
  HiGHS got wrong.

Model reuse.  The model is built once per problem object (a
``WeakKeyDictionary`` keyed on the problem's identity); a new ``eta`` only
changes objective coefficients (HiGHS ``changeColsCost``, started from the
previous optimum, feasible for every eta; CP-SAT rebuilds only the objective and
hints the previous k).  HiGHS's first solve starts from k = 0; a solve stopped by
the time limit without any solution (possible with CP-SAT) returns k = 0, which
is always in W.  Either way the answer has status ``TIME_LIMIT`` and is never
certified.

HiGHS quirk: its task scheduler is global and sized by the first solve in the
process; a solve with a different ``threads`` then fails immediately
(``kError``), so the scheduler is reset and the solve retried once.

highspy and OR-Tools may not share a process.  Both wheels can ship a library with
the SONAME ``libhighs.so.1`` (different HiGHS versions: highspy 1.15 and the copy
inside ortools 9.15 clash); the dynamic loader keeps whichever is loaded first, so the
second import fails with ``ImportError: undefined symbol`` in either order.  Whether
a given pair clashes depends on the two wheels (highspy 1.16 with ortools 9.15 does
not), so the code below detects it instead of assuming it.
Neither solver is imported at module import.  CP-SAT therefore runs, by default,
in a private worker subprocess (``isolate=None`` or ``True``) that keeps the
built models across calls, so the caller's process never loads ``libortools``
and stays free to use highspy; HiGHS runs in-process and falls back to the same
kind of worker if highspy cannot be loaded because OR-Tools' CP-SAT already is.
``isolate=False`` forces in-process solving.  Workers end with :meth:`close`, when
the oracle is garbage collected, or at interpreter exit.

Layout.  This module holds the oracle (:class:`MonolithicMIPOracle`: certification,
tie check, choice of in-process or isolated solving); the solver-independent
structure is in :mod:`oracledp.oracles._mono_structure`, the HiGHS model and
:func:`highs_scale_trusted_by_schema` in :mod:`oracledp.oracles._mono_highs`, the
CP-SAT model in :mod:`oracledp.oracles._mono_cpsat` and the worker process in
:mod:`oracledp.oracles._mono_worker` (all re-exported here).
"""

from __future__ import annotations

import contextlib
import importlib.util
import math
import threading
import time
import weakref
from typing import Any

import numpy as np
from numpy.typing import NDArray

from oracledp.oracles._base import OracleResult, OracleStatus, check_time_limit, make_result
from oracledp.oracles._brute import BruteForceOracle
from oracledp.oracles._exact import ExactObjective
from oracledp.oracles._halfspace import HalfspaceProblem
from oracledp.oracles._mono_cpsat import _CPSAT_PRECISION as _CPSAT_PRECISION
from oracledp.oracles._mono_cpsat import _EXACT as _EXACT
from oracledp.oracles._mono_cpsat import _CpSatModel
from oracledp.oracles._mono_highs import _HIGHS_ABS_GAP as _HIGHS_ABS_GAP
from oracledp.oracles._mono_highs import _HIGHS_MIP_FEAS_TOL as _HIGHS_MIP_FEAS_TOL
from oracledp.oracles._mono_highs import _HIGHS_PRIMAL_FEAS_TOL as _HIGHS_PRIMAL_FEAS_TOL
from oracledp.oracles._mono_highs import _HIGHS_SCHEDULER_LOCK as _HIGHS_SCHEDULER_LOCK
from oracledp.oracles._mono_highs import _HIGHS_TOL as _HIGHS_TOL
from oracledp.oracles._mono_highs import _coo_to_csr as _coo_to_csr
from oracledp.oracles._mono_highs import _HighsModel, highs_scale_trusted_by_schema
from oracledp.oracles._mono_structure import _attainable_norms as _attainable_norms
from oracledp.oracles._mono_structure import _Raw, _structure
from oracledp.oracles._mono_structure import _Structure as _Structure
from oracledp.oracles._mono_worker import _WORKER_PROBLEMS as _WORKER_PROBLEMS
from oracledp.oracles._mono_worker import _stop_worker as _stop_worker
from oracledp.oracles._mono_worker import _worker_main as _worker_main
from oracledp.oracles._mono_worker import _WorkerClient

_NAMES = {"highs": "highs-monolithic", "cpsat": "cpsat"}
# HiGHS may discard points up to its MIP feasibility tolerance (1e-6) below an incumbent or
# an objective bound (HighsMipSolverData::computeNewUpperLimit): the tie check asks about
# a window this much wider, which covers that and the LP relaxations' tolerances (trusted)
_HIGHS_TIE_WINDOW = 1e-5
_TIE_MAX_SOLVES = 8  # further solves of the tie check before refusing
_VERIFY_MAX_POINTS = 250_000  # default largest |W| verified by enumeration
_VERIFY_MAX_WORK = 100_000_000  # |W| x n x d >= the one-time integer multiply-adds


# --------------------------------------------------------------------------------------------
# The oracle
# --------------------------------------------------------------------------------------------
_HIGHSPY_IMPORT_ERROR: list[str] = []  # set once when highspy cannot be loaded in this process


def _highspy_loadable() -> bool:
    if _HIGHSPY_IMPORT_ERROR:
        return False
    try:
        import highspy  # noqa: F401
    except ImportError as exc:
        _HIGHSPY_IMPORT_ERROR.append(str(exc))
        return False
    return True


class MonolithicMIPOracle:
    """Exact oracle: the whole problem as one MIP, solved by HiGHS or CP-SAT.

    Parameters
    ----------
    solver:
        ``"highs"`` (highspy, name ``"highs-monolithic"``) or ``"cpsat"`` (OR-Tools,
        name ``"cpsat"``, optional extra ``oracledp[ortools]``).
    time_limit:
        Seconds per solve; a solve stopped by it returns the incumbent (or w = 0)
        with status ``TIME_LIMIT``, never certified.
    threads:
        Solver threads (HiGHS ``threads``, CP-SAT ``num_workers``).
    verbose:
        Solver log on (to stderr when the solver runs in a worker).
    isolate:
        Run the solver in a private subprocess.  ``None`` (default): CP-SAT always,
        HiGHS only when highspy cannot be loaded next to an already loaded OR-Tools.
    verify_max_points:
        Largest |W| for which an optimal answer is verified (and if need be
        replaced) by exact enumeration; 0 turns the enumeration off (the
        certificate then rests on the solver's bound, see the module docstring).
    """

    def __init__(
        self,
        solver: str = "highs",
        *,
        time_limit: float = 60.0,
        threads: int = 1,
        verbose: bool = False,
        isolate: bool | None = None,
        verify_max_points: int = _VERIFY_MAX_POINTS,
    ) -> None:
        if solver not in _NAMES:
            raise ValueError(
                f"unknown MIP solver {solver!r}; valid names are: {', '.join(sorted(_NAMES))}"
            )
        tl = check_time_limit(time_limit)
        if isinstance(threads, bool) or not isinstance(threads, (int, np.integer)) or threads < 1:
            raise ValueError(f"threads must be a positive integer, got {threads!r}")
        if isolate not in (None, True, False):
            raise TypeError(f"isolate must be None, True or False, got {isolate!r}")
        if (isinstance(verify_max_points, bool)
                or not isinstance(verify_max_points, (int, np.integer)) or verify_max_points < 0):
            raise ValueError(
                f"verify_max_points must be a non-negative integer, got {verify_max_points!r}"
            )
        if solver == "cpsat" and importlib.util.find_spec("ortools") is None:
            raise ImportError(
                "solver 'cpsat' needs OR-Tools: pip install 'oracledp[ortools]'"
            )
        self.solver = solver
        self.name = _NAMES[solver]
        self.time_limit = tl
        self.threads = int(threads)
        self.verbose = bool(verbose)
        self.isolate = isolate
        self.verify_max_points = int(verify_max_points)
        self._brute = BruteForceOracle(max_points=self.verify_max_points)
        self._verifiable: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self._models: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self._worker: _WorkerClient | None = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return (
            f"MonolithicMIPOracle(solver={self.solver!r}, time_limit={self.time_limit}, "
            f"threads={self.threads}, verbose={self.verbose}, isolate={self.isolate}, "
            f"verify_max_points={self.verify_max_points})"
        )

    def _options(self) -> dict[str, Any]:
        return {"solver": self.solver, "time_limit": self.time_limit,
                "threads": self.threads, "verbose": self.verbose,
                "verify_max_points": self.verify_max_points}

    # pickling keeps the configuration only (models and workers are per process)
    def __getstate__(self) -> dict[str, Any]:
        return {**self._options(), "isolate": self.isolate,
                "verify_max_points": self.verify_max_points}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(**state)  # type: ignore[misc]

    def close(self) -> None:
        """Stop the worker process, if any (models built in-process are kept)."""
        if self._worker is not None:
            self._worker.close()
            self._worker = None

    def _isolated(self) -> bool:
        if self.isolate is not None:
            return self.isolate
        if self.solver == "cpsat":
            return True
        return not _highspy_loadable()

    def _model(self, problem: HalfspaceProblem) -> tuple[_HighsModel | _CpSatModel, bool, float]:
        try:
            return self._models[problem], True, 0.0
        except (KeyError, TypeError):
            pass
        t = time.perf_counter()
        cls = _HighsModel if self.solver == "highs" else _CpSatModel
        model = cls(_structure(problem), self.time_limit, self.threads, self.verbose)
        with contextlib.suppress(TypeError):
            self._models[problem] = model
        return model, False, time.perf_counter() - t

    def check_problem(self, problem: HalfspaceProblem, separable: bool = False) -> None:
        """Refuse, before any noise, a problem whose certificate could only be refused.

        With HiGHS, a W too large to enumerate and a declared schema whose grids and
        bounds allow a badly scaled model (:func:`highs_scale_trusted_by_schema` False),
        whether HiGHS's bound may be trusted would depend on the data: refuse up front,
        from public facts only.
        """
        if (self.solver == "highs" and not self._can_enumerate(problem)
                and highs_scale_trusted_by_schema(problem) is False):
            raise ValueError(
                "the declared feature schema allows integer scores too large for HiGHS's "
                "tolerances to certify exactly, and W is too large to verify by enumeration: "
                "use solver='cpsat' (exact integer arithmetic), coarser grids or smaller "
                "bounds in the schema"
            )

    def _can_enumerate(self, problem: HalfspaceProblem) -> bool:
        """Whether W is small enough to verify by enumeration (public sizes only)."""
        try:
            return self._verifiable[problem]
        except (KeyError, TypeError):
            pass
        space = problem.space
        ok = False
        if self.verify_max_points > 0 and hasattr(space, "size"):
            size = space.size()
            ok = (size <= self.verify_max_points
                  and size * max(1, problem.n) * space.d <= _VERIFY_MAX_WORK)
        with contextlib.suppress(TypeError):
            self._verifiable[problem] = ok
        return ok

    def _certify(self, problem: HalfspaceProblem, eta: NDArray[np.float64], raw: _Raw) -> _Raw:
        """Decide exactly by enumeration, keep the solver's tie-checked answer if its bound is
        trusted, or refuse.  Sets ``raw.info["exact"]``."""
        trusted = bool(raw.info.pop("bound_trusted", False))
        exact = bool(raw.info.pop("exact", False))
        raw.info["exact"] = False
        if raw.status is OracleStatus.TIME_LIMIT:
            return raw  # a stopped search is never certified
        if self._can_enumerate(problem):
            # also after a solver failure (HiGHS can end in "Solve error" on large
            # coefficients): the enumeration alone is the certificate, decided exactly
            raw.status = OracleStatus.OPTIMAL
            K, loss, P = self._brute._tables(problem)
            obj = loss - P @ eta
            i, near = ExactObjective(problem, eta).argmin(K, obj, losses=loss)
            raw.info["certificate"] = "enumeration"
            raw.info["near_ties"] = near
            if i is None:
                raw.info["reason"] = "an exact comparison of near-tied points was undecided"
                return raw
            k = raw.k
            if k is None or not np.array_equal(np.asarray(k, dtype=np.int64), K[i]):
                raw.info["solver_point_rejected"] = True
            raw.k, raw.bound = K[i].copy(), float(obj[i])
            raw.info["exact"] = True
        elif raw.status is not OracleStatus.OPTIMAL:
            raw.info["certificate"] = "none"  # make_result needs an optimal status
        elif trusted:
            raw.info["certificate"] = "solver bound"
            raw.info["exact"] = exact  # the tie check of _solve_raw
        else:
            raw.bound = -math.inf
            raw.info["certificate"] = "none"
            raw.info["reason"] = (
                "HiGHS's floating-point bound is not trusted on this model (its integer "
                "coefficients are too large for the solver tolerances to leave every sign "
                "decision exact) and W is not verified by enumeration (too large, or turned "
                "off); solver='cpsat' solves the same model in exact integer arithmetic"
            )
        return raw

    def _tie_check(self, problem: HalfspaceProblem, model: Any, eta: NDArray[np.float64],
                   raw: _Raw, t0: float) -> None:
        """Make a trusted optimal answer exact: ask the solver again for any point other than
        the known candidates whose objective may lie below the incumbent's plus the float band
        and the solver's own tolerance window; compare the candidates exactly.

        The solver's "nothing there" rests on the same trust as its optimality proof.  Sets
        ``raw.k`` to the exact argmin of the candidates and ``raw.info["exact"]``.
        """
        ex = ExactObjective(problem, eta)
        if ex.zero_noise:  # F is an integer: the solver's optimum (within its window) is exact
            raw.info["exact"] = True
            return
        tol = ex.tolerance()
        if self.solver == "highs":
            window = _HIGHS_TIE_WINDOW
        else:  # CP-SAT's scaled objective is exact in integers; its rounding, twice
            window = 2.0 * float(raw.info.get("rounding_bound", 0.0)) + 1e-12
        assert raw.k is not None
        cands = [np.asarray(raw.k, dtype=np.int64)]
        vals = [float(problem.objective_k(cands[0], eta)[0])]
        settled = False
        solves = 0
        while solves < _TIE_MAX_SOLVES:
            solves += 1
            best = min(vals)
            cutoff = best + 3.0 * tol + window
            left = self.time_limit - (time.perf_counter() - t0)
            if left <= 0:
                break
            r = model.solve(eta, exclude=cands, cutoff=cutoff, time_limit=left)
            if r.status is OracleStatus.INFEASIBLE:
                settled = True  # no other point below the cutoff (minus the window)
                break
            if r.status is not OracleStatus.OPTIMAL or r.k is None:
                break  # time limit or failure: undecided
            k = np.asarray(r.k, dtype=np.int64)
            if not problem.space.contains_k(k)[0] or any(np.array_equal(k, c) for c in cands):
                break  # the solver broke an exclusion: refuse
            f = float(problem.objective_k(k, eta)[0])
            if f >= cutoff:
                settled = True  # the best other point is above the cutoff
                break
            cands.append(k)
            vals.append(f)
        raw.info["tie_solves"] = solves
        raw.info["exact"] = False
        if not settled:
            raw.info["reason"] = "the check for near-tied points did not finish"
            return
        K = np.array(cands)
        i, near = ex.argmin(K, np.array(vals), tol=tol)
        raw.info["near_ties"] = near
        if i is None:
            raw.info["reason"] = "an exact comparison of near-tied points was undecided"
            return
        raw.k = K[i]
        raw.info["exact"] = True

    def _solve_raw(self, problem: HalfspaceProblem, eta: NDArray[np.float64]) -> _Raw:
        t0 = time.perf_counter()
        model, reused, build_s = self._model(problem)
        raw = model.solve(eta)
        raw.info.update(model_reused=reused, build_s=build_s, **model.shape)
        if (raw.status is OracleStatus.OPTIMAL and raw.k is not None
                and raw.info.get("bound_trusted") and not self._can_enumerate(problem)):
            self._tie_check(problem, model, eta, raw, t0)
        return raw

    def solve(self, problem: HalfspaceProblem, eta: NDArray[np.floating]) -> OracleResult:
        """Minimize F(w; eta) over problem.space exactly; see the module docstring."""
        t0 = time.perf_counter()
        eta = np.array(eta, dtype=np.float64)
        if eta.shape != (problem.space.d + 1,):
            raise ValueError(f"eta must have shape ({problem.space.d + 1},), got {eta.shape}")
        if not np.isfinite(eta).all():
            raise ValueError("eta must be finite")
        with self._lock:
            if self._isolated():
                if self._worker is None or not self._worker.alive:
                    self._worker = _WorkerClient(self._options())
                raw = self._worker.solve(problem, eta)
                if self.solver == "highs" and _HIGHSPY_IMPORT_ERROR:
                    raw.info["in_process_import_error"] = _HIGHSPY_IMPORT_ERROR[0]
            else:
                raw = self._solve_raw(problem, eta)
        raw = self._certify(problem, eta, raw)
        k = raw.k
        if k is None and raw.status is OracleStatus.TIME_LIMIT:
            k = np.zeros(problem.space.d, dtype=np.int64)  # always in W; never certified
            raw.info["incumbent"] = "none found: returning k = 0"
        exact = bool(raw.info.pop("exact", False))
        return make_result(
            problem, eta, k, raw.bound, raw.status, time.perf_counter() - t0, self.name,
            exact=exact, **raw.info
        )
