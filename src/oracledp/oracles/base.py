"""Oracle protocol and result type.

An oracle solves ``min_{w in W} F(w; eta)`` for a
:class:`~oracledp.oracles.halfspace.HalfspaceProblem` and a noise vector
``eta`` (Definition 2.2, normalized linear optimization oracle).  It reports
whether the answer is *certified*: proven optimal with a zero gap between the
exact objective of the returned point and the solver's proven lower bound
(up to :data:`CERTIFY_ABS_TOL`, a millionth of one misclassified example).
Mechanisms that need an exact oracle release only certified answers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

if TYPE_CHECKING:
    from oracledp.oracles.halfspace import HalfspaceProblem, Perturbation

CERTIFY_ABS_TOL = 1e-6
"""Largest gap (objective units: misclassified examples) accepted as zero."""


class OracleStatus(StrEnum):
    OPTIMAL = "optimal"
    TIME_LIMIT = "time_limit"
    GAP = "gap"  # stopped with a positive gap for another reason
    INFEASIBLE = "infeasible"
    ERROR = "error"


@dataclass(frozen=True)
class OracleResult:
    """What an oracle returns.

    ``solution`` is the parameter vector w (tau * k), ``k`` its integer
    coordinates, ``objective`` the exact objective F(w; eta) of that point
    (recomputed in exact integer arithmetic, not the solver's float value),
    ``bound`` a proven lower bound on min F, ``certified`` whether
    ``objective - bound <= CERTIFY_ABS_TOL`` with an optimal status.
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


def make_result(
    problem: HalfspaceProblem,
    eta: NDArray[np.floating] | Perturbation,
    k: NDArray[np.integer] | None,
    bound: float,
    status: OracleStatus,
    wall_time: float,
    solver: str,
    **info: Any,
) -> OracleResult:
    """Build a result from an integer point, recomputing its objective exactly.

    ``eta`` is OPDisc's noise vector or a general
    :class:`~oracledp.oracles.halfspace.Perturbation`.

    Certification requires an optimal status, a feasible point and a gap of at
    most :data:`CERTIFY_ABS_TOL` against the proven bound.
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
    certified = status is OracleStatus.OPTIMAL and obj - bound <= CERTIFY_ABS_TOL
    if status is OracleStatus.OPTIMAL and not certified:
        status = OracleStatus.GAP
    return OracleResult(
        solution=problem.space.tau * k.astype(np.float64),
        k=k,
        objective=obj,
        bound=float(bound),
        certified=bool(certified),
        status=status,
        wall_time=wall_time,
        solver=solver,
        loss=loss,
        info=dict(info),
    )
