"""A scikit-learn classifier around Gaussian RSPM (FOCS 2019 Theorem 7's mechanism, with the
calibration proven in ``docs/proofs/gaussian-rspm-calibration.md``)."""

from __future__ import annotations

from typing import Any

from oracledp._params import store_init_arguments
from oracledp.estimators._exact import ExactHalfspaceClassifier
from oracledp.learners._gaussian_rspm import gaussian_rspm
from oracledp.oracles._base import Oracle
from oracledp.oracles._halfspace import FeatureSchema


class GaussianRSPMClassifier(ExactHalfspaceClassifier):
    """(eps, delta)-DP 0/1-loss linear classifier with weights in {-1, 0, 1}^d (Gaussian RSPM).

    One call to an exact weighted oracle on the data plus the 2d separator examples
    (e_j, +1), (-e_j, +1) with weights ``N(0, sigma^2)``, sigma from the bound proven in
    ``docs/proofs/gaussian-rspm-calibration.md`` (public parameters only: eps, delta,
    m = 2d and |W|, the size of the declared parameter space).  Same interface, the same
    ``space`` (W, a subset of {-1, 0, 1}^d; default ``"auto"``: RSPM's rule), validation,
    label mapping and exact-oracle semantics as
    :class:`~oracledp.estimators.RSPMClassifier`, plus ``delta`` (None means
    ``1 / n**2``, as for :class:`~oracledp.estimators.OPDiscClassifier`) and
    ``calibration`` (``"paper"``: the Gaussian-mechanism sigma of Theorem 7's rate, NOT
    private: ``guarantee_.holds`` is False and a PrivacyWarning is issued).

    Privacy
    -------
    (eps, delta)-DP, replace-one neighbours; requires the oracle to return the exact
    minimizer.  ``guarantee_`` holds the statement, with sigma, m and |W| in its calibration.

    Attributes
    ----------
    coef_, intercept_ (0.0), classes_, guarantee_, space_ (W), space_description_,
    result_ (GaussianRSPMResult),
    sigma_ (the weights' standard deviation), m_ (separator size 2d), calibration_ (a
    GaussianRSPMCalibration); with ``keep_diagnostics=True`` also ``diagnostics_`` (NOT
    private, never pickled).

    Examples
    --------
    >>> import numpy as np
    >>> from oracledp.estimators import GaussianRSPMClassifier
    >>> X = np.array([[2, 1], [1, 2], [2, 2], [-2, -1], [-1, -2], [-2, 0]]) / 2
    >>> clf = GaussianRSPMClassifier(epsilon=1.0, delta=1e-3, oracle="brute",
    ...                              feature_grid=0.5, random_state=0)
    >>> clf.fit(X, [1, 1, 1, 0, 0, 0]).guarantee_.describe().split("; ")[:2]
    ['(1, 0.001)-DP, replace-one neighbours', 'assumes an exact oracle']
    >>> clf.m_, round(clf.sigma_, 2)
    (4, 12.64)
    """

    def __init__(
        self,
        epsilon: float = 1.0,
        delta: float | None = None,
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
        calibration: str = "proven",
        random_state: Any = None,
    ) -> None:
        store_init_arguments(self, locals())

    _mechanism = staticmethod(gaussian_rspm)
    _space_model = "rspm"  # W: RSPM's rule (a subset of {-1, 0, 1}^d)

    def _noise_attributes(self, result: Any) -> dict[str, Any]:
        return {"sigma_": float(result.sigma), "m_": int(result.m),
                "calibration_": result.calibration}
