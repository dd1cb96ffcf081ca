"""The default ``highs`` oracle: picks the exact formulation that suits the data.

Tabular data (at most ``max_candidates`` outer candidates, i.e. integer vectors over the
non-binary columns in W's box and ball, counted exactly; the rest 0/1) go to
the structured decomposition (:mod:`oracledp.oracles._structured`); anything
else to the exact branch-and-bound over k (:mod:`oracledp.oracles._branch`, no
solver: integer loss bounds, every noise and separator perturbation, any scale
of the public grid).  ``formulation="monolithic"`` keeps the big-M MIP
(:mod:`oracledp.oracles._monolithic`) as a baseline.  The choice reads only the
declared 0/1 columns and the sizes.  All are exact and report certification
honestly.
"""

from __future__ import annotations

import os
import weakref
from typing import Any

import numpy as np
from numpy.typing import NDArray

from oracledp._validation import check_choice
from oracledp.oracles._base import Oracle, OracleResult
from oracledp.oracles._branch import DEFAULT_WORK_LIMIT as BRANCH_WORK
from oracledp.oracles._branch import BranchBoundOracle
from oracledp.oracles._halfspace import HalfspaceProblem, Perturbation
from oracledp.oracles._structured import DEFAULT_WORK_LIMIT as STRUCTURED_WORK
from oracledp.oracles._structured import (
    MAX_CANDIDATES,
    StructuredOracle,
    structured_applicable,
)

FORMULATIONS = ("auto", "structured", "branch", "monolithic")


def default_workers() -> int:
    """Inner problems the structured oracle solves at once by default: the CPUs this
    process may use, at most 2; 1 in a child process (a joblib / Dask / multiprocessing
    worker, where the draws themselves already run in parallel).  Speed only: a certified
    answer does not depend on it."""
    import multiprocessing

    if multiprocessing.parent_process() is not None:
        return 1
    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not on Linux
        n = os.cpu_count() or 1
    return max(1, min(2, n))
_BRUTE_MAX_POINTS = 2_000_000


class AutoOracle:
    """Exact oracle choosing the structured decomposition (HiGHS inner MIPs) or the
    branch-and-bound over k (or, on request, the monolithic HiGHS MIP).

    ``workers``: inner problems of the structured decomposition solved at once in threads
    (default :func:`default_workers`: the usable CPUs, at most 2); 1 when draws already run
    in parallel processes.  Speed only: a certified answer is the exact argmin either way.
    ``max_candidates``: the structured decomposition is chosen when the number of outer
    candidates (:func:`~oracledp.oracles._structured.numeric_candidates`, public) is at most
    this.  ``work_limit``: the deterministic limit of either formulation (LP relaxations +
    MIP solves + MIP nodes for the structured one, nodes for the branch-and-bound; None: no
    limit; ``"auto"``: each formulation's default, about 1.5 minutes of a quiet 2-core machine,
    :data:`~oracledp.oracles._structured.DEFAULT_WORK_LIMIT` and
    :data:`~oracledp.oracles._branch.DEFAULT_WORK_LIMIT`); with it, whether a solve
    certifies does not depend on the machine, its load or ``workers``.
    """

    def __init__(self, solver: str = "highs", *, formulation: str = "auto",
                 time_limit: float = 60.0, work_limit: int | str | None = None, threads: int = 1,
                 max_candidates: int = MAX_CANDIDATES, coupled_bound: bool = True,
                 workers: int | None = None, verbose: bool = False) -> None:
        check_choice(formulation, "formulation", FORMULATIONS)
        if solver != "highs":
            raise ValueError(f"AutoOracle supports solver 'highs' only, got {solver!r}")
        self.name = "highs"
        self.formulation = formulation
        if work_limit is not None and formulation == "monolithic":
            raise ValueError("work_limit is not available with formulation='monolithic'")
        self.max_candidates = int(max_candidates)
        self.work_limit = work_limit
        self.workers = default_workers() if workers is None else int(workers)
        auto = isinstance(work_limit, str) and work_limit == "auto"
        self._structured = StructuredOracle(time_limit=time_limit,
                                            work_limit=STRUCTURED_WORK if auto else work_limit,
                                            threads=threads, max_candidates=max_candidates,
                                            coupled_bound=coupled_bound,
                                            workers=self.workers, verbose=verbose)
        self._branch = BranchBoundOracle(time_limit=time_limit,
                                         work_limit=BRANCH_WORK if auto else work_limit)
        self._options: dict[str, Any] = {"time_limit": time_limit, "threads": threads,
                                         "verbose": verbose}
        self._monolithic: Oracle | None = None
        self._choice: weakref.WeakKeyDictionary[HalfspaceProblem, str] = (
            weakref.WeakKeyDictionary()
        )

    def formulation_for(self, problem: HalfspaceProblem) -> str:
        if self.formulation != "auto":
            return self.formulation
        choice = self._choice.get(problem)
        if choice is None:
            choice = ("structured" if structured_applicable(problem, self.max_candidates)
                      else "branch")
            self._choice[problem] = choice
        return choice

    def check_problem(self, problem: HalfspaceProblem, separable: bool) -> None:
        """Refuse, before any noise is drawn, a problem this oracle cannot take.

        Reads only public facts: the 0/1 columns (declared by the problem's
        schema), the number of columns and the size of W.  ``separable``: the
        perturbation is a general :class:`Perturbation` (RSPM) rather than
        OPDisc's noise vector.
        """
        if self.formulation_for(problem) == "monolithic" and not separable:
            self._monolithic_oracle().check_problem(problem)
        if (separable and self.formulation_for(problem) == "monolithic"
                and problem.space.size() > _BRUTE_MAX_POINTS):
            raise ValueError(
                "the monolithic formulation takes OPDisc's noise vector only; this perturbation "
                "needs the structured or branch formulation (formulation='auto'), or a "
                f"parameter space of at most {_BRUTE_MAX_POINTS} points"
            )

    def solve(self, problem: HalfspaceProblem,
              eta: NDArray[np.floating] | Perturbation) -> OracleResult:
        form = self.formulation_for(problem)
        if form == "structured":
            return self._structured.solve(problem, eta)
        if form == "branch":
            return self._branch.solve(problem, eta)
        if isinstance(eta, Perturbation):
            # The monolithic models take OPDisc's noise vector only; a general separable
            # perturbation (e.g. RSPM's separator weights) on non-tabular data is solved by
            # exact enumeration when W is small enough.
            self.check_problem(problem, separable=True)
            from oracledp.oracles._brute import BruteForceOracle

            return BruteForceOracle(max_points=_BRUTE_MAX_POINTS).solve(problem, eta)
        return self._monolithic_oracle().solve(problem, eta)

    def _monolithic_oracle(self) -> Any:
        if self._monolithic is None:
            from oracledp.oracles._monolithic import MonolithicMIPOracle

            self._monolithic = MonolithicMIPOracle(solver="highs", **self._options)
        return self._monolithic
