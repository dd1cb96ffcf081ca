"""The default ``highs`` oracle: picks the exact formulation that suits the data.

Tabular data (at most ``max_numeric`` non-binary columns, the rest 0/1) go to
the structured decomposition (:mod:`oracledp.oracles.structured`); anything
else to the monolithic big-M MIP (:mod:`oracledp.oracles.monolithic`).  Both
are exact and both report certification honestly.
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np
from numpy.typing import NDArray

from oracledp._validation import check_choice
from oracledp.oracles.base import Oracle, OracleResult
from oracledp.oracles.halfspace import HalfspaceProblem, Perturbation
from oracledp.oracles.structured import StructuredOracle, structured_applicable

FORMULATIONS = ("auto", "structured", "monolithic")
_BRUTE_MAX_POINTS = 2_000_000


class AutoOracle:
    """HiGHS-backed exact oracle choosing the structured or monolithic formulation."""

    def __init__(self, solver: str = "highs", *, formulation: str = "auto",
                 time_limit: float = 60.0, threads: int = 1, max_numeric: int = 4,
                 verbose: bool = False) -> None:
        check_choice(formulation, "formulation", FORMULATIONS)
        if solver != "highs":
            raise ValueError(f"AutoOracle supports solver 'highs' only, got {solver!r}")
        self.name = "highs"
        self.formulation = formulation
        self.max_numeric = max_numeric
        self._structured = StructuredOracle(time_limit=time_limit, threads=threads,
                                            max_numeric=max_numeric, verbose=verbose)
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
            choice = ("structured" if structured_applicable(problem, self.max_numeric)
                      else "monolithic")
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
        if (separable and self.formulation_for(problem) != "structured"
                and problem.space.size() > _BRUTE_MAX_POINTS):
            raise ValueError(
                "this perturbation needs the structured formulation (at most "
                f"{self.max_numeric} non-binary columns, the rest declared 0/1 in the feature "
                f"schema) or a parameter space of at most {_BRUTE_MAX_POINTS} points"
            )

    def solve(self, problem: HalfspaceProblem,
              eta: NDArray[np.floating] | Perturbation) -> OracleResult:
        if self.formulation_for(problem) == "structured":
            return self._structured.solve(problem, eta)
        if isinstance(eta, Perturbation):
            # The monolithic models take OPDisc's noise vector only; a general separable
            # perturbation (e.g. RSPM's separator weights) on non-tabular data is solved by
            # exact enumeration when W is small enough.
            self.check_problem(problem, separable=True)
            from oracledp.oracles.brute import BruteForceOracle

            return BruteForceOracle(max_points=_BRUTE_MAX_POINTS).solve(problem, eta)
        return self._monolithic_oracle().solve(problem, eta)

    def _monolithic_oracle(self) -> Any:
        if self._monolithic is None:
            from oracledp.oracles.monolithic import MonolithicMIPOracle

            self._monolithic = MonolithicMIPOracle(solver="highs", **self._options)
        return self._monolithic
