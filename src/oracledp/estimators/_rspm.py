"""A scikit-learn classifier around Laplace RSPM (Neel, Roth, Wu, FOCS 2019, Section III.A)."""

from __future__ import annotations

from typing import Any

import numpy as np

from oracledp.estimators._base import store_init_arguments
from oracledp.estimators._opdisc import OPDiscClassifier
from oracledp.learners._rspm import RSPMResult, rspm, rspm_space
from oracledp.oracles._base import Oracle
from oracledp.oracles._halfspace import FeatureSchema, HalfspaceProblem
from oracledp.oracles._space import IntegerBall


class RSPMClassifier(OPDiscClassifier):
    """Pure eps-DP 0/1-loss linear classifier with weights in {-1, 0, 1}^d (RSPM).

    One call to an exact weighted oracle on the data plus the 2d separator
    examples (e_j, +1), (-e_j, +1) with weights Lap(4d/eps) (Theorem 6).  Same
    interface, validation, label mapping and exact-oracle semantics as
    :class:`~oracledp.estimators.OPDiscClassifier` (sgn(0) = 0 in training, a score
    of 0 predicts ``classes_[0]``; uncertified oracle answers raise OracleFailure).

    Privacy
    -------
    eps-DP (pure), replace-one neighbours; requires the oracle to return the exact
    minimizer.  ``guarantee_`` holds the statement.

    Attributes
    ----------
    coef_, intercept_ (0.0), classes_, guarantee_, result_ (RSPMResult),
    scale_ (the Laplace scale 2m/eps), m_ (separator size 2d); with
    ``keep_diagnostics=True`` also ``diagnostics_`` (NOT private, never pickled; see
    :class:`~oracledp.estimators.OPDiscClassifier`).

    Examples
    --------
    >>> import numpy as np
    >>> from oracledp.estimators import RSPMClassifier
    >>> X = np.array([[2, 1], [1, 2], [2, 2], [-2, -1], [-1, -2], [-2, 0]]) / 2
    >>> clf = RSPMClassifier(epsilon=1.0, oracle="brute", feature_grid=0.5, random_state=0)
    >>> clf.fit(X, [1, 1, 1, 0, 0, 0]).guarantee_.describe().split("; ")[:2]
    ['1-DP (pure), replace-one neighbours', 'assumes an exact oracle']
    >>> clf.scale_, clf.m_  # Laplace scale 2m/eps of the 2d separator weights
    (8.0, 4)
    """

    # OPDiscClassifier parameters that RSPM does not have (W is fixed to {-1,0,1}^d).
    delta = None
    tau = 1.0
    bound = None
    radius = None
    calibration = "proven"

    def __init__(
        self,
        epsilon: float = 1.0,
        *,
        oracle: str | Oracle = "highs",
        time_limit: float | None = 60.0,
        work_limit: int | None = None,
        allow_uncertified: bool = False,
        schema: FeatureSchema | None = None,
        feature_grid: float | None = None,
        classes: Any = None,
        keep_diagnostics: bool = False,
        random_state: Any = None,
    ) -> None:
        store_init_arguments(self, locals())

    def _declared_delta(self, delta: float) -> float:
        return 0.0  # pure epsilon-DP

    def _make_space(self, d: int, bound: float | None, radius: float | None,
                    tau: float) -> IntegerBall:
        return rspm_space(d)

    def _release(self, problem: HalfspaceProblem, epsilon: float, delta: float, oracle: Oracle,
                 rng: np.random.Generator, *, return_diagnostics: bool = False) -> RSPMResult:
        return rspm(problem, epsilon, oracle=oracle, random_state=rng,
                    allow_uncertified=bool(self.allow_uncertified),
                    return_diagnostics=return_diagnostics)

    def _noise_attributes(self, result: Any) -> dict[str, Any]:
        return {"scale_": float(result.scale), "m_": int(result.m)}
