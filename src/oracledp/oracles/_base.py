"""Oracle protocol and result type; what "certified" means.

An oracle solves ``min_{w in W} F(w; eta)`` for a
:class:`~oracledp.oracles._halfspace.HalfspaceProblem` and a noise vector
``eta`` (Definition 2.2, normalized linear optimization oracle) or a general
:class:`~oracledp.oracles._halfspace.Perturbation` (RSPM's weighted objective).
Mechanisms that need an exact oracle (OPDisc, RSPM) release only *certified*
answers, and **certified means: the returned point is the exact argmin of F over
W, under the tie rule below** -- not "within a tolerance of the optimum".

Exact objective.  In integer coordinates ``k`` (``w = tau k``)::

    F(k) = L(k) - <eta, pi(k)>,   pi(k) = (k / sqrt(K2), sqrt(1 - ||k||^2 / K2)),

``L`` the 0/1 loss (an exact integer), ``eta`` floats (exact dyadic rationals),
``K2 = space.max_k_norm2`` (an integer).  So ``sqrt(K2) F(k)`` is a rational plus
rational multiples of ``sqrt(K2)`` and ``sqrt(K2 - ||k||^2)``.  For a Perturbation
without ``eta`` the table entries (plus an optional residual table) are the exact costs.

Tie rule.  Among points with exactly equal objectives (an event of probability zero
under continuous noise) the lexicographically smallest integer vector ``k`` is the
argmin.  (The brute-force enumeration order is lexicographic, so it agrees.)  Exception:
no noise at all, below.

Exactness argument (:mod:`oracledp.oracles._exact`).

1. *Float band.*  Every floating-point evaluation of F the oracles use is within
   ``tol`` of the exact value (:meth:`ExactObjective.tolerance`: 128 times a bound on
   ``d + cap + 2`` roundings of terms below the objective's magnitude, including the
   square root's error near ``||k||^2 = K2``).  A point whose float value exceeds
   another's by more than ``2 tol`` is certainly worse.
2. *No pruning inside the band.*  A search discards a region only when a rigorous
   lower bound on it (float bounds lowered by ``tol``) is *strictly above* the exact
   objective of the incumbent (its float value plus ``tol``).  So every exact
   minimizer survives to be evaluated, and every evaluated point within ``2 tol`` of
   the float minimum is kept as a candidate.
3. *Exact decision.*  When more than one candidate lies in the band, they are compared
   exactly: the difference of two objectives is ``A + sum_c q_c sqrt(c)`` (rational
   ``A, q_c``, distinct square-free ``c``); it is zero iff every coefficient is zero
   (square roots of distinct square-free integers are linearly independent over Q),
   else its sign is read from outward-rounded integer square roots at increasing
   precision (64, 128, ... bits).  Beyond 4,096 bits (never seen) the answer is
   refused: uncertified.  With one candidate in the band no exact arithmetic runs.
4. *Solvers.*  Where a MIP solver's proof cannot be reproduced (HiGHS, CP-SAT), the
   solver's optimality only holds up to its tolerance window (HiGHS discards points up
   to its MIP feasibility tolerance below an incumbent), so the oracle asks a second
   question wherever that window reaches the band: *is there a point other than the
   known candidates below the incumbent plus the band and the window?* (the known
   points kept out by no-good constraints, or by tilting the objective away from the
   best one).  "No" rests on the same trust in the solver as its optimality proof; a
   point found becomes a candidate and the question is asked again.  Enumeration
   (brute force, the monolithic oracle's verification) and the branch-and-bound need
   no trust in a solver.

With no noise at all (``eta = 0``, a zero Perturbation: never a private release) F is
the integer loss, every float value is exact, and the searches prove the minimum value
and return an exact minimizer of their choice rather than enumerating the (typically
huge) set of equal losses; enumeration still returns the smallest k.  Each of these
choices is fixed by the problem and the oracle's options: the structured decomposition
searches in batches of fixed size then, so its point does not depend on ``workers``.

Result.  ``certified`` is True only with an optimal status and an exact decision by
the oracle (``make_result(..., exact=True)``), and a reported bound consistent with
the point (``objective - bound <= CERTIFY_ABS_TOL``, a sanity check).  An oracle
outside this library that does not say ``exact`` is certified only when it reports a
zero gap (``objective <= bound``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

if TYPE_CHECKING:
    from oracledp.oracles._halfspace import HalfspaceProblem, Perturbation

CERTIFY_ABS_TOL = 1e-6
"""Consistency check only: a certified point's objective may exceed the reported bound by
at most this much (float bounds).  Certification itself is exact (module docstring)."""


class OracleStatus(StrEnum):
    OPTIMAL = "optimal"
    TIME_LIMIT = "time_limit"
    WORK_LIMIT = "work_limit"  # stopped by the deterministic work limit
    GAP = "gap"  # stopped with a positive gap for another reason
    INFEASIBLE = "infeasible"
    ERROR = "error"


@dataclass(frozen=True)
class OracleResult:
    """What an oracle returns.

    ``solution`` is the parameter vector w (tau * k), ``k`` its integer
    coordinates, ``objective`` the exact objective F(w; eta) of that point
    (recomputed in exact integer arithmetic, not the solver's float value),
    ``bound`` a lower bound on min F (float, for information), ``certified``
    whether the oracle decided exactly that ``k`` is the argmin (module docstring).
    """

    solution: NDArray[np.float64] | None
    k: NDArray[np.int64] | None
    objective: float
    bound: float
    certified: bool
    status: OracleStatus
    wall_time: float
    solver: str
    loss: int | None = None
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def gap(self) -> float:
        return float(self.objective - self.bound)

    def summary(self) -> dict[str, Any]:
        return {
            "solver": self.solver,
            "status": str(self.status),
            "certified": self.certified,
            "objective": self.objective,
            "bound": self.bound,
            "gap": self.gap,
            "loss": self.loss,
            "wall_time": self.wall_time,
            **{k: v for k, v in self.info.items() if isinstance(v, (int, float, str, bool))},
        }


@runtime_checkable
class Oracle(Protocol):
    """A normalized linear optimization oracle for 0/1-loss halfspaces."""

    name: str

    def solve(self, problem: HalfspaceProblem, eta: NDArray[np.floating]) -> OracleResult:
        """Minimize F(w; eta) over problem.space."""
        ...


def check_time_limit(time_limit: object) -> float:
    """A backend's ``time_limit`` in seconds: a number > 0 (``inf``: no limit); the one rule
    of every backend that takes one."""
    if isinstance(time_limit, bool) or not isinstance(time_limit, int | float | np.number):
        raise TypeError(f"time_limit must be a number of seconds, got {type(time_limit).__name__}")
    if not time_limit > 0:  # NaN fails too
        raise ValueError(f"time_limit must be > 0 seconds, got {time_limit!r}")
    return float(time_limit)


def check_work_limit(work_limit: object, name: str = "work_limit") -> int | None:
    """A backend's ``work_limit``: None (no limit) or an integer >= 1 (LP relaxations, MIP
    solves and branch-and-bound nodes, as each backend documents); the one rule of every
    backend and estimator that takes one (``name``: what the messages call it)."""
    if work_limit is None:
        return None
    if isinstance(work_limit, bool) or not isinstance(work_limit, int | np.integer):
        raise TypeError(f"{name} must be None or an integer, got {type(work_limit).__name__}")
    if work_limit < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {work_limit!r}")
    return int(work_limit)


def certify(status: OracleStatus, objective: float, bound: float, exact: bool | None
            ) -> tuple[bool, OracleStatus]:
    """Whether an answer with this objective is certified, and its status.

    ``exact``: the oracle decided in exact arithmetic that the point is the argmin (tie
    rule included); certification then requires an optimal status and ``objective - bound
    <= CERTIFY_ABS_TOL`` (a consistency check of the reported bound).  ``None`` (oracles
    outside this library): an optimal status and a zero gap, ``objective <= bound``.  An
    optimal status that is not certified is reported as :attr:`OracleStatus.GAP`.
    """
    if exact is None:
        certified = status is OracleStatus.OPTIMAL and objective <= bound
    else:
        certified = (status is OracleStatus.OPTIMAL and exact
                     and objective - bound <= CERTIFY_ABS_TOL)
    if status is OracleStatus.OPTIMAL and not certified:
        status = OracleStatus.GAP
    return bool(certified), status


def make_result(
    problem: HalfspaceProblem,
    eta: NDArray[np.floating] | Perturbation,
    k: NDArray[np.integer] | None,
    bound: float,
    status: OracleStatus,
    wall_time: float,
    solver: str,
    *,
    exact: bool | None = None,
    **info: Any,
) -> OracleResult:
    """Build a result from an integer point, recomputing its objective from the data.

    ``eta`` is OPDisc's noise vector or a general
    :class:`~oracledp.oracles._halfspace.Perturbation`.

    ``exact``: the oracle decided in exact arithmetic that ``k`` is the argmin over W
    (tie rule included).  Certification requires a feasible point, then :func:`certify`.
    """
    if k is None:
        return OracleResult(None, None, float("inf"), float(bound), False, status,
                            wall_time, solver, None, dict(info))
    k = np.asarray(np.rint(k), dtype=np.int64)
    if not problem.space.contains_k(k)[0]:
        return OracleResult(None, None, float("inf"), float(bound), False, OracleStatus.ERROR,
                            wall_time, solver, None, {**info, "reason": "point outside W"})
    loss = int(problem.loss_k(k)[0])
    if isinstance(eta, np.ndarray) or not hasattr(eta, "evaluate_k"):
        obj = float(loss - problem.space.pi_k(k) @ np.asarray(eta, dtype=np.float64))
    else:  # a Perturbation
        obj = float(loss + eta.evaluate_k(k, problem.space.k_max)[0])
    certified, status = certify(status, obj, bound, exact)
    return OracleResult(problem.space.tau * k.astype(np.float64), k, obj, float(bound), certified,
                        status, wall_time, solver, loss, dict(info))
