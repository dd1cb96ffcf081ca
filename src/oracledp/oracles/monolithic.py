"""Exact monolithic MIP oracle for the 0/1-loss halfspace problem (HiGHS or OR-Tools CP-SAT).

Problem (integer coordinates ``k``, ``w = tau * k``, see :mod:`oracledp.oracles.halfspace`)::

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
:mod:`oracledp.oracles.base`).  A solver's floating-point "optimal" is not a
certificate; the exact decision comes from one of three sources, in this order
(``info["certificate"]`` says which):

1. ``"enumeration"`` (exact, either solver).  When W is small enough to enumerate
   (at most ``verify_max_points`` points and ``|W| x n x d`` within a budget of
   integer multiply-adds; public sizes only), the exact argmin over W is computed
   (scores and losses in int64 arithmetic, exact below 2^52; points within the float
   band of the minimum compared exactly by :mod:`oracledp.oracles.exact`).  If it is
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
"""

from __future__ import annotations

import contextlib
import importlib.util
import itertools
import math
import os
import pickle
import subprocess
import sys
import threading
import time
import traceback
import weakref
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from oracledp.oracles._highs import new_highs
from oracledp.oracles.base import OracleResult, OracleStatus, make_result
from oracledp.oracles.brute import BruteForceOracle
from oracledp.oracles.exact import ExactObjective
from oracledp.oracles.halfspace import HalfspaceProblem, gcd_reduced_rows

_NAMES = {"highs": "highs-monolithic", "cpsat": "cpsat"}
_HIGHS_ABS_GAP = 1e-9
# HiGHS may discard points up to its MIP feasibility tolerance (1e-6) below an incumbent or
# an objective bound (HighsMipSolverData::computeNewUpperLimit): the tie check asks about
# a window this much wider, which covers that and the LP relaxations' tolerances (trusted)
_HIGHS_TIE_WINDOW = 1e-5
_TIE_MAX_SOLVES = 8  # further solves of the tie check before refusing
_HIGHS_MIP_FEAS_TOL = 1e-6  # integrality, column bounds and rows in the MIP search
_HIGHS_PRIMAL_FEAS_TOL = 1e-7  # LP relaxations
_HIGHS_TOL = max(_HIGHS_MIP_FEAS_TOL, _HIGHS_PRIMAL_FEAS_TOL)
_VERIFY_MAX_POINTS = 250_000  # default largest |W| verified by enumeration
_VERIFY_MAX_WORK = 100_000_000  # |W| x n x d >= the one-time integer multiply-adds
_HIGHS_SCHEDULER_LOCK = threading.Lock()
_CPSAT_PRECISION = 1e-9  # aim: worst-case rounding gap 2 E / S <= (d k_max + 1) / S <= this
_EXACT = 2.0**52  # magnitudes kept below this stay exact in float64 and int64
_WORKER_PROBLEMS = 8  # problems (with their models) a worker keeps


# --------------------------------------------------------------------------------------------
# Solver-independent structure of the MIP
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Structure:
    d: int
    k_max: int
    K2: int  # space.max_k_norm2: D^2 / tau^2 in pi
    norms: NDArray[np.int64]  # attainable ||k||^2, ascending (starts with 0)
    N: NDArray[np.int64]  # rows of the groups that some k can classify (a non-zero entry)
    M: NDArray[np.int64]  # exact bound on |N_g . k| over W, >= 1
    n_pos: NDArray[np.int64]
    n_neg: NDArray[np.int64]
    n_total: int  # loss when every example is misclassified
    pos: NDArray[np.int64] = field(init=False)  # indices (into N) of groups with a positive
    neg: NDArray[np.int64] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "pos", np.flatnonzero(self.n_pos > 0))
        object.__setattr__(self, "neg", np.flatnonzero(self.n_neg > 0))

    @property
    def values(self) -> NDArray[np.int64]:
        """The non-zero values a of one coordinate, in the order of the z_{j,a} columns."""
        return np.array([a for a in range(-self.k_max, self.k_max + 1) if a != 0], dtype=np.int64)

    def costs(self, eta: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Objective coefficients of k (per coordinate) and of u (per attainable squared norm).

        Same floating-point expressions as :meth:`IntegerBall.pi_k`.
        """
        c_k = -(eta[: self.d] / math.sqrt(self.K2))
        last = np.sqrt(np.clip(1.0 - self.norms / self.K2, 0.0, None))
        return c_k, -(eta[self.d] * last)


def _attainable_norms(d: int, k_max: int, cap: int) -> NDArray[np.int64]:
    reach = np.zeros(cap + 1, dtype=bool)
    reach[0] = True
    squares = [a * a for a in range(k_max + 1) if a * a <= cap]
    for _ in range(d):
        new = np.zeros_like(reach)
        for s in squares:
            new[s:] |= reach[: cap + 1 - s]
        if (new == reach).all():
            break
        reach = new
    return np.flatnonzero(reach).astype(np.int64)


def _structure(problem: HalfspaceProblem) -> _Structure:
    space = problem.space
    k_max, cap = space.k_max, space.k_norm2_max
    N = np.asarray(problem.N, dtype=np.int64)
    n_pos = np.asarray(problem.n_pos, dtype=np.int64)
    n_neg = np.asarray(problem.n_neg, dtype=np.int64)
    n_total = int(n_pos.sum() + n_neg.sum())
    # Exact reduction (the margin S >= 1 becomes S >= gcd: a tighter relaxation); an
    # all-zero row has S = 0 and is always misclassified.
    N, n_pos, n_neg = gcd_reduced_rows(N, n_pos, n_neg)
    box = np.abs(N).sum(axis=1) * k_max  # <= 2^52 (checked by HalfspaceProblem.from_data)
    # Cauchy-Schwarz in exact integers: |S| <= sqrt(||N_g||^2 ||k||^2), and S is an integer
    cs = np.array(
        [math.isqrt(sum(int(v) * int(v) for v in row) * cap) for row in N], dtype=np.int64
    ).reshape(-1)
    M = np.minimum(box, cs)  # >= 1 for a non-zero row
    return _Structure(
        d=int(space.d),
        k_max=int(k_max),
        K2=int(space.max_k_norm2),
        norms=_attainable_norms(int(space.d), int(k_max), int(cap)),
        N=N,
        M=M,
        n_pos=n_pos,
        n_neg=n_neg,
        n_total=n_total,
    )


@dataclass
class _Raw:
    """A solver's answer before exact re-evaluation (picklable, crosses the worker pipe)."""

    k: NDArray[np.int64] | None
    bound: float
    status: OracleStatus
    info: dict[str, Any] = field(default_factory=dict)


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
        # The well-scaling rule of the module docstring: t (1 + max_r ||A_r||_1) <= 1/2.
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


# --------------------------------------------------------------------------------------------
# CP-SAT
# --------------------------------------------------------------------------------------------
class _CpSatModel:
    def __init__(self, st: _Structure, time_limit: float, threads: int, verbose: bool) -> None:
        from ortools.sat.python import cp_model

        self._cp = cp_model
        self.st = st
        self.time_limit, self.threads, self.verbose = time_limit, threads, verbose
        m = cp_model.CpModel()
        vals = [int(a) for a in st.values]
        self.k = [m.new_int_var(-st.k_max, st.k_max, f"k{j}") for j in range(st.d)]
        sq_terms: list[Any] = []
        sq_coefs: list[int] = []
        self.z: list[list[Any]] = []
        for j in range(st.d):
            z = [m.new_bool_var(f"z{j}_{a}") for a in vals]
            self.z.append(z)
            m.add_at_most_one(z)
            m.add(self.k[j] == cp_model.LinearExpr.weighted_sum(z, vals))
            sq_terms += z
            sq_coefs += [a * a for a in vals]
        self.u = [m.new_bool_var(f"u{v}") for v in st.norms]
        m.add_exactly_one(self.u)
        m.add(
            cp_model.LinearExpr.weighted_sum(sq_terms, sq_coefs)
            == cp_model.LinearExpr.weighted_sum(self.u, [int(v) for v in st.norms])
        )

        def score(g: int) -> Any:
            row = st.N[g]
            nz = np.flatnonzero(row)
            return cp_model.LinearExpr.weighted_sum([self.k[j] for j in nz], [int(row[j]) for j in nz])

        self.a: dict[int, Any] = {}
        self.b: dict[int, Any] = {}
        for g in st.pos:
            self.a[int(g)] = lit = m.new_bool_var(f"a{g}")
            m.add(score(int(g)) >= 1).only_enforce_if(lit)
        for g in st.neg:
            self.b[int(g)] = lit = m.new_bool_var(f"b{g}")
            m.add(score(int(g)) <= -1).only_enforce_if(lit)
            if int(g) in self.a:
                m.add_bool_or([self.a[int(g)].Not(), lit.Not()])
        self.model = m
        self.loss_vars = list(self.a.values()) + list(self.b.values())
        self.loss_coefs = [int(st.n_pos[g]) for g in self.a] + [int(st.n_neg[g]) for g in self.b]
        self.shape = {"variables": len(m.proto.variables), "constraints": len(m.proto.constraints)}
        self.hint = np.zeros(st.d, dtype=np.int64)

    def _scaled_objective(self, eta: NDArray[np.float64]) -> tuple[float, list[int], list[int], float]:
        """Scale S = 2^s, integer noise coefficients, and the worst-case rounding error E."""
        st = self.st
        c_k, c_u = st.costs(eta)
        magnitude = st.n_total + st.k_max * float(np.abs(c_k).sum()) + float(np.abs(c_u).max()) + 1.0
        wanted = math.ceil(math.log2((st.d * st.k_max + 1) / _CPSAT_PRECISION))
        s = min(wanted, math.floor(math.log2(_EXACT / magnitude)))  # |objective| * S <= 2^52
        if s < 0:
            raise ValueError("objective too large for an exact integer scaling (n or |eta| ~ 2^52)")
        S = 2.0**s
        ck_s, cu_s = c_k * S, c_u * S  # exact: multiplication by a power of two
        ck_i, cu_i = np.rint(ck_s), np.rint(cu_s)
        E = st.k_max * float(np.abs(ck_i - ck_s).sum()) + float(np.abs(cu_i - cu_s).max())
        return S, [int(c) for c in ck_i], [int(c) for c in cu_i], E

    def solve(self, eta: NDArray[np.float64], exclude: list[NDArray[np.int64]] | None = None,
              cutoff: float = math.inf, time_limit: float | None = None) -> _Raw:
        """Solve for eta; ``exclude``: points to cut off and ``cutoff``: keep only points whose
        true objective may be below it (both on a copy of the model, exact integers)."""
        cp_model, st = self._cp, self.st
        S, ck, cu, E = self._scaled_objective(eta)
        iS = int(S)
        self.model.clear_hints()  # start from the previous answer (k = 0 at first)
        for var, value in zip(self.k, self.hint, strict=True):
            self.model.add_hint(var, int(value))
        coefs = [-iS * c for c in self.loss_coefs] + ck + cu
        self.model.minimize(
            cp_model.LinearExpr.weighted_sum(self.loss_vars + self.k + self.u, coefs)
        )
        model = self.model
        if exclude or math.isfinite(cutoff):
            model = self.model.clone()
            lit = model.get_bool_var_from_proto_index
            for k in exclude or []:
                clause = []
                for j, kj in enumerate(np.asarray(k, dtype=np.int64)):
                    if kj == 0:
                        clause += [lit(z.index) for z in self.z[j]]
                    else:
                        a = int(np.flatnonzero(st.values == kj)[0])
                        clause.append(lit(self.z[j][a].index).Not())
                model.add_bool_or(clause)
            if math.isfinite(cutoff):
                # a point whose true objective is below the cutoff has a scaled objective
                # below S (cutoff - n_total) + E: keep exactly those (integer arithmetic)
                rhs = math.floor(S * (cutoff - st.n_total) + E)
                variables = [model.get_int_var_from_proto_index(v.index)
                             for v in self.loss_vars + self.k + self.u]
                model.add(cp_model.LinearExpr.weighted_sum(variables, coefs) <= rhs)
        solver = cp_model.CpSolver()
        p = solver.parameters
        p.max_time_in_seconds = float(self.time_limit if time_limit is None
                                      else max(time_limit, 1e-3))
        p.num_workers = int(self.threads)
        p.log_search_progress = bool(self.verbose)
        p.absolute_gap_limit = 0.0
        p.relative_gap_limit = 0.0
        p.random_seed = 0
        t = time.perf_counter()
        code = solver.solve(model)
        solve_s = time.perf_counter() - t
        status = {
            cp_model.OPTIMAL: OracleStatus.OPTIMAL,
            cp_model.FEASIBLE: OracleStatus.TIME_LIMIT,  # only a limit stops a feasible search
            cp_model.UNKNOWN: OracleStatus.TIME_LIMIT,
            cp_model.INFEASIBLE: OracleStatus.INFEASIBLE,
        }.get(code, OracleStatus.ERROR)
        k = None
        if code in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            k = np.array([solver.value(v) for v in self.k], dtype=np.int64)
            self.hint = k
        B = float(solver.best_objective_bound)
        if status is OracleStatus.INFEASIBLE:
            bound = math.inf
        elif k is not None and math.isfinite(B) and abs(B) < _EXACT:
            # (with no solution, status UNKNOWN, the response's bound is an unset 0)
            # valid for the true objective: the rounding moves any point by at most E / S;
            # the last term covers float rounding in the exact re-evaluation (~1e-16 relative)
            bound = st.n_total + (B - E) / S
            bound -= 4 * np.finfo(float).eps * (st.n_total + float(np.abs(eta).sum()) + 1.0)
        else:
            bound = -math.inf
        return _Raw(
            k,
            float(bound),
            status,
            {
                "solver_status": solver.status_name(code),
                "scale": S,
                "rounding_bound": E / S,
                "branches": int(solver.num_branches),
                "solve_s": solve_s,
                "bound_trusted": True,  # exact integer arithmetic
            },
        )


# --------------------------------------------------------------------------------------------
# Worker subprocess (isolates OR-Tools from highspy, or highspy from an OR-Tools process)
# --------------------------------------------------------------------------------------------
def _stop_worker(proc: subprocess.Popen) -> None:
    with contextlib.suppress(Exception):
        assert proc.stdin is not None
        proc.stdin.close()
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    with contextlib.suppress(Exception):
        assert proc.stdout is not None
        proc.stdout.close()


class _WorkerClient:
    """A private solver process: problems are sent once (by token), then only eta."""

    def __init__(self, options: dict[str, Any]) -> None:
        self.options = options
        root = str(Path(__file__).resolve().parents[2])  # the directory holding `oracledp`
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
        self.proc = subprocess.Popen(
            [sys.executable, "-c", "from oracledp.oracles.monolithic import _worker_main; _worker_main()"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
        )
        self._finalizer = weakref.finalize(self, _stop_worker, self.proc)
        self._tokens: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self._count = itertools.count()

    def close(self) -> None:
        self._finalizer()

    @property
    def alive(self) -> bool:
        return self._finalizer.alive and self.proc.poll() is None

    def _request(self, msg: tuple) -> tuple:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        pickle.dump(msg, self.proc.stdin, protocol=pickle.HIGHEST_PROTOCOL)
        self.proc.stdin.flush()
        return pickle.load(self.proc.stdout)

    def solve(self, problem: HalfspaceProblem, eta: NDArray[np.float64]) -> _Raw:
        try:
            token = self._tokens.get(problem)
        except TypeError:
            token = None
        send = token is None
        if send:
            token = next(self._count)
            with contextlib.suppress(TypeError):
                self._tokens[problem] = token
        try:
            reply = self._request(("solve", token, problem if send else None, eta, self.options))
            if reply[0] == "missing":  # the worker evicted it: send it again
                reply = self._request(("solve", token, problem, eta, self.options))
        except (EOFError, OSError, pickle.UnpicklingError) as exc:
            code = self.proc.poll()
            self.close()
            return _Raw(None, -math.inf, OracleStatus.ERROR,
                        {"reason": f"solver worker died ({type(exc).__name__}, exit code {code})"})
        if reply[0] == "ok":
            raw: _Raw = reply[1]
            raw.info["isolated"] = True
            return raw
        _, kind, message, tb = reply
        if kind in ("ImportError", "ModuleNotFoundError"):
            raise ImportError(f"{message} (in the solver worker process)")
        raise RuntimeError(f"solver worker raised {kind}: {message}\n{tb}")


def _worker_main() -> None:
    """Serve solve requests on stdin/stdout (pickles); anything printed goes to stderr."""
    inp = sys.stdin.buffer
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # solver logs written to fd 1 must not corrupt the protocol
    sys.stdout = sys.stderr
    problems: OrderedDict[int, HalfspaceProblem] = OrderedDict()
    oracles: dict[tuple, MonolithicMIPOracle] = {}
    while True:
        try:
            msg = pickle.load(inp)
        except EOFError:
            break
        _, token, problem, eta, options = msg
        if problem is not None:
            problems[token] = problem
            while len(problems) > _WORKER_PROBLEMS:
                problems.popitem(last=False)
        if token not in problems:
            reply: tuple = ("missing",)
        else:
            problems.move_to_end(token)
            try:
                key = tuple(sorted(options.items()))
                if key not in oracles:
                    oracles[key] = MonolithicMIPOracle(**options, isolate=False)
                reply = ("ok", oracles[key]._solve_raw(problems[token], eta))
            except Exception as exc:
                reply = ("error", type(exc).__name__, str(exc), traceback.format_exc())
        pickle.dump(reply, out, protocol=pickle.HIGHEST_PROTOCOL)
        out.flush()


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
        tl = float(time_limit)
        if not tl > 0:
            raise ValueError(f"time_limit must be > 0 seconds, got {time_limit!r}")
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
