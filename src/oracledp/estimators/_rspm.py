"""A scikit-learn classifier around Laplace RSPM (Neel, Roth, Wu, FOCS 2019, Section III.A)."""

from __future__ import annotations

from typing import Any

from oracledp._params import store_init_arguments
from oracledp.estimators._exact import ExactHalfspaceClassifier
from oracledp.learners._rspm import rspm
from oracledp.oracles._base import Oracle
from oracledp.oracles._halfspace import FeatureSchema


class RSPMClassifier(ExactHalfspaceClassifier):
    """Pure eps-DP 0/1-loss linear classifier with weights in {-1, 0, 1}^d (RSPM).

    One call to an exact weighted oracle on the data plus the 2d separator
    examples (e_j, +1), (-e_j, +1) with weights Lap(4d/eps) (Theorem 6), over the
    declared parameter space W, a subset of {-1, 0, 1}^d (``space``).  Same
    interface, validation, label mapping and exact-oracle semantics as
    :class:`~oracledp.estimators.OPDiscClassifier` (sgn(0) = 0 in training, a score
    of 0 predicts ``classes_[0]``; uncertified oracle answers raise OracleFailure).

    Parameters
    ----------
    space : {"auto", "paper"}, str "norm2=R" or dict {"norm2": R}, default="auto"
        The parameter space W, a declared public parameter (never read from the data):
        ``{-1, 0, 1}^d`` intersected with ``||w||_2^2 <= R`` (at most R nonzero weights).
        ``"auto"``: a rule on the number of features d alone, the whole box while it has
        at most 10^6 points (``d <= 12``), else R = 4; ``"paper"``: the whole box
        ``{-1, 0, 1}^d`` of the ICML 2020 experiment; ``"norm2=R"``: R given (a ``bound``
        can only be 1).  The
        separators (e_j, +1), (-e_j, +1) separate every subset of the box, so the noise
        scale 2m/eps and the guarantee are the same for every W
        (docs/proofs/rspm-shift.md); a smaller W is a smaller exact search.  W, |W| and D
        are recorded in ``guarantee_.notes`` and ``space_``.

    The other parameters are :class:`~oracledp.estimators.OPDiscClassifier`'s (no
    ``delta``, ``tau``, ``bound``, ``radius`` or ``calibration``).

    Privacy
    -------
    eps-DP (pure), replace-one neighbours; requires the oracle to return the exact
    minimizer.  ``guarantee_`` holds the statement.

    Attributes
    ----------
    coef_, intercept_ (0.0), classes_, guarantee_, space_ (W), space_description_,
    result_ (RSPMResult),
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

    def __init__(
        self,
        epsilon: float = 1.0,
        *,
        space: Any = "auto",
        oracle: str | Oracle = "highs",
        time_limit: float | None = None,
        work_limit: int | None = None,
        allow_uncertified: bool = False,
        schema: FeatureSchema | None = None,
        feature_grid: float | None = None,
        classes: Any = None,
        keep_diagnostics: bool = False,
        random_state: Any = None,
    ) -> None:
        store_init_arguments(self, locals())

    _mechanism = staticmethod(rspm)
    _space_model = "rspm"
    _pure = True  # pure epsilon-DP: no delta, no calibration

    def _noise_attributes(self, result: Any) -> dict[str, Any]:
        return {"scale_": float(result.scale), "m_": int(result.m)}
