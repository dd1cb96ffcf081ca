"""scikit-learn estimators around the Accuracy First algorithms (Ligett et al., NeurIPS 2017).

* :class:`AccuracyFirstRidge`: ridge regression by CovNR (Algorithm 3) or the
  DoublingMethod with covariance perturbation (Algorithm 4).
* :class:`AccuracyFirstLogisticRegression`: l2-regularised logistic regression
  by OutputNR (Algorithm 5, corrected) or the DoublingMethod with output
  perturbation.

The caller fixes the accuracy (target excess empirical risk ``alpha``); the
fit finds the most private level on its grid that meets it and reports the
realised *ex-post* privacy loss in ``guarantee_`` / ``ex_post_``.  The
estimators only validate, map labels and call :mod:`oracledp.erm`; all checks
run before any randomness is drawn.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils import Tags
from sklearn.utils.validation import check_is_fitted

from oracledp._validation import check_choice, check_positive, check_rng
from oracledp.diagnostics import (
    PicklesWithoutDiagnostics,
    check_diagnostics_flag,
    split_diagnostics,
)
from oracledp.erm import AccuracyFirstResult, covnr, doubling, outputnr
from oracledp.erm._framework import DEFAULT_LAMBDA, _check_bool
from oracledp.erm.sensitivity import CALIBRATIONS, _check_gamma
from oracledp.errors import PrivacyWarning
from oracledp.estimators._base import (
    BinaryClassifierTags,
    map_binary_labels,
    validate_private_data,
)

__all__ = ["AccuracyFirstLogisticRegression", "AccuracyFirstRidge"]

_RELEASE_WARNING = (
    "{name}: no privacy level passed the accuracy test; the non-private optimum theta* was "
    "released because allow_no_halt=True. Its ex-post privacy loss is infinite: the model "
    "carries NO differential privacy guarantee."
)


def _reset(est: BaseEstimator) -> None:
    """Forget a previous fit, so a refused refit cannot leave a stale model behind."""
    for attr in [a for a in vars(est) if a.endswith("_") and not a.startswith("__")]:
        delattr(est, attr)


def _check_calibration(calibration: object, method: str) -> str:
    cal = check_choice(calibration, "calibration", CALIBRATIONS)
    if method == "doubling" and cal != "paper":
        raise ValueError(
            "calibration applies to the noise-reduction methods only; the DoublingMethod's "
            "tests follow Theorem A.2 (use calibration='paper')"
        )
    return cal


def _store(est: Any, result: AccuracyFirstResult) -> None:
    result, diagnostics = split_diagnostics(result)
    est.result_ = result
    est.ex_post_ = result.ex_post
    est.guarantee_ = result.guarantee
    est.epsilon_ = result.epsilon
    est.stopping_index_ = result.stopping_index
    est.eps_grid_ = result.eps_grid
    if diagnostics is not None:
        est.diagnostics_ = diagnostics
    if not result.guarantee.holds:
        warnings.warn(
            _RELEASE_WARNING.format(name=type(est).__name__), PrivacyWarning, stacklevel=3
        )


_COMMON_DOC = """
    gamma : float, default=0.1
        Failure probability of the accuracy guarantee, in (0, 1).
    lam : float, default=0.005
        Regularisation lambda > 0 of ``lambda ||theta||^2 / 2`` (Appendix B.1).
    eps_list : None, tuple or array-like, default=None
        The privacy levels searched.  None: the paper's grid from 1/n to 4E
        (E from the theory curve; 1000 geometric levels for noise reduction, a
        doubling grid for ``method="doubling"``).  A tuple ``(eps_min, eps_max, T)``
        (noise reduction) or ``(eps_min, eps_max)`` (doubling), or explicit
        strictly increasing levels.  The grid is treated as public; the default
        depends on n, which is then treated as public too.
    max_epsilon : float or None, default=None
        A cap on the ex-post privacy loss: the grid is cut to its longest prefix whose
        worst loss (the accuracy test's epsilon plus the last level, or E(T) for the
        doubling method) is at most ``max_epsilon``, so no fit, released or refused, loses
        more (:func:`oracledp.erm.theory.cap_levels`).  ``fit`` raises ValueError, before
        any randomness, when even the first level exceeds it.  None: no cap (the command
        line's ``--max-epsilon`` defaults to :data:`oracledp.guidance.EPSILON_CAP`).
    calibration : {"paper", "one-sided"}, default="paper"
        How the accuracy test's epsilon is set for the noise-reduction methods
        (CovNR/OutputNR): the paper's ``16 Delta ln(2T/gamma)/alpha`` or the
        one-sided union bound ``Delta (12 ln(1/gamma) + 8 ln(T/2))/alpha`` (about
        half; same accuracy guarantee, see
        :func:`oracledp.erm.sensitivity.iat_epsilon`).  Must be "paper" with
        ``method="doubling"``.
    allow_no_halt : bool, default=False
        If no level passes the test the algorithms would release the non-private
        optimum: ``fit`` raises :class:`~oracledp.erm.NoHaltError` instead.  With
        True the optimum is kept, a :class:`~oracledp.errors.PrivacyWarning` is
        issued and ``guarantee_.holds`` is False (``epsilon_ = inf``).
    keep_diagnostics : bool, default=False
        Keep the run's :class:`~oracledp.diagnostics.NonPrivateDiagnostics`
        (``excess_risk`` on the training data, ``timings``) as ``diagnostics_``, for
        research: issues a :class:`~oracledp.errors.DiagnosticsWarning` and sets
        ``guarantee_.diagnostics_released``; ``diagnostics_`` is never pickled.
    random_state : None, int, SeedSequence or numpy Generator, default=None
        Source of all noise.  An int seed reproduces the fit; a Generator is
        consumed.  :func:`sklearn.base.clone` deep-copies a Generator, so clones
        draw identical noise: use int seeds or None in cross-validation.
"""

_ATTR_DOC = """
    guarantee_ : PrivacyGuarantee
        Kind ``EX_POST``: the realised ex-post privacy loss of this fit.
    ex_post_ : ExPostLoss
        The same loss with its breakdown (``epsilon_test``, ``epsilon_hypothesis``,
        ``stopping_index``).
    epsilon_ : float
        ``ex_post_.epsilon`` (inf if theta* was released).
    stopping_index_ : int or None
        0-based index into ``eps_grid_`` of the level released.
    eps_grid_ : ndarray
        The levels searched.
    result_ : AccuracyFirstResult
        The released run (theta, stopping index, ex-post loss, public parameters);
        its ``diagnostics`` is always None.
    diagnostics_ : NonPrivateDiagnostics
        Only with ``keep_diagnostics=True``: ``excess_risk`` and ``timings``.  NOT
        private; dropped when the estimator is pickled.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when X was a DataFrame with string column names.
"""


class AccuracyFirstRidge(PicklesWithoutDiagnostics, RegressorMixin, BaseEstimator):
    __doc__ = f"""Ridge regression with a target accuracy and an ex-post privacy loss.

    Finds, on a grid of privacy levels, the most private hypothesis whose excess
    empirical risk ``L(theta) - L(theta*)`` is at most ``alpha``, for
    ``L(theta) = ||y - X theta||^2 / (2n) + lam ||theta||^2 / 2`` over
    ``||theta||_2 <= sqrt(1/lam)``.  No intercept (``intercept_ = 0.0``).

    Parameters
    ----------
    alpha : float
        Target excess empirical risk (> 0).
    method : {{"covnr", "doubling"}}, default="covnr"
        CovNR (Algorithm 3, Theorem 3.2) or the DoublingMethod with covariance
        perturbation (Algorithm 4, Theorem A.2).
{_COMMON_DOC}
    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        The released theta.
    intercept_ : float
        Always 0.0.
{_ATTR_DOC}
    Raises
    ------
    BoundsViolation
        A row with ``||x_i||_1 > 1`` or a target with ``|y_i| > 1`` (nothing is clipped).
    NoHaltError
        No level passed and ``allow_no_halt`` is False.

    Privacy
    -------
    Ex-post differential privacy (Ligett et al. 2017, Definition 2.3) for
    replace-one neighbours in the domain ``||x_i||_1 <= 1``, ``|y_i| <= 1``:
    ``eps_0 + eps_k`` for CovNR stopping at level k (Theorem 3.2), ``E(k)`` for the
    DoublingMethod (Theorem A.2).  The loss depends on the data through the
    stopping level; it is not an ex-ante epsilon-DP guarantee.  With probability
    at least ``1 - gamma`` the released theta has excess risk at most alpha.
    n, the number of features and the grid are treated as public.  Idealized numerics.

    References
    ----------
    K. Ligett, S. Neel, A. Roth, B. Waggoner, Z. S. Wu. "Accuracy First:
    Selecting a Differential Privacy Level for Accuracy-Constrained ERM".
    NeurIPS 2017.
    """

    def __init__(
        self,
        alpha: float,
        *,
        gamma: float = 0.1,
        lam: float = DEFAULT_LAMBDA,
        method: str = "covnr",
        eps_list: Any = None,
        max_epsilon: float | None = None,
        calibration: str = "paper",
        allow_no_halt: bool = False,
        keep_diagnostics: bool = False,
        random_state: Any = None,
    ) -> None:
        self.alpha = alpha
        self.gamma = gamma
        self.lam = lam
        self.method = method
        self.eps_list = eps_list
        self.max_epsilon = max_epsilon
        self.calibration = calibration
        self.allow_no_halt = allow_no_halt
        self.keep_diagnostics = keep_diagnostics
        self.random_state = random_state

    def __sklearn_tags__(self) -> Tags:
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = False
        tags.input_tags.allow_nan = False
        return tags

    def __sklearn_is_fitted__(self) -> bool:
        return hasattr(self, "coef_")

    def fit(self, X: ArrayLike, y: ArrayLike) -> AccuracyFirstRidge:
        """Run CovNR or the DoublingMethod once on (X, y).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows with ``||x_i||_1 <= 1``.
        y : array-like of shape (n_samples,)
            Targets with ``|y_i| <= 1``.

        Returns
        -------
        self
        """
        _reset(self)
        alpha = check_positive(self.alpha, "alpha")
        gamma = _check_gamma(self.gamma)
        lam = check_positive(self.lam, "lam")
        method = check_choice(self.method, "method", ("covnr", "doubling"))
        calibration = _check_calibration(self.calibration, method)
        allow = _check_bool(self.allow_no_halt, "allow_no_halt")
        keep = check_diagnostics_flag(self.keep_diagnostics, "keep_diagnostics")
        rng = check_rng(self.random_state)  # type check only: nothing is drawn here
        X_arr, y_arr = validate_private_data(
            self, X, y, dtype=np.float64, ensure_all_finite=True, y_numeric=True
        )
        common = {"gamma": gamma, "lam": lam, "eps_list": self.eps_list, "random_state": rng,
                  "return_diagnostics": keep, "max_epsilon": self.max_epsilon}
        if method == "covnr":
            result = covnr(
                X_arr, y_arr, alpha, allow_no_halt=allow, calibration=calibration, **common
            )
        else:
            result = doubling(X_arr, y_arr, alpha, task="ridge", allow_no_halt=allow, **common)
        self.coef_ = np.array(result.theta, dtype=np.float64)
        self.intercept_ = 0.0
        _store(self, result)
        return self

    def predict(self, X: ArrayLike) -> NDArray[np.float64]:
        """``X @ coef_``."""
        check_is_fitted(self)
        X_arr = validate_private_data(
            self, X, dtype=np.float64, ensure_all_finite=True, reset=False)
        return X_arr @ self.coef_


class AccuracyFirstLogisticRegression(PicklesWithoutDiagnostics, BinaryClassifierTags,
                                      ClassifierMixin, BaseEstimator):
    __doc__ = f"""l2-regularised logistic regression with a target accuracy and an ex-post privacy loss.

    Finds, on a grid of privacy levels, the most private hypothesis whose excess
    empirical risk is at most ``alpha``, for
    ``L(theta) = (1/n) sum_i log(1 + exp(-y_i <theta, x_i>)) + lam ||theta||^2 / 2``
    with labels mapped to {{-1, +1}}.  No intercept (``intercept_ = 0.0``).

    Parameters
    ----------
    alpha : float
        Target excess empirical risk (> 0).
    method : {{"outputnr", "doubling"}}, default="outputnr"
        OutputNR (Algorithm 5 with the corrections in :mod:`oracledp.erm._outputnr`,
        Theorem 3.4) or the DoublingMethod with output perturbation (Algorithm 4,
        Theorem A.2).
{_COMMON_DOC}
    classes : sequence of two labels or None, default=None
        The public label set, mapped in sorted order to -1 and +1.  None reads it
        from y (treating the label set of the training data as public, and
        refusing y with one class).

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        ``classes_[0]`` is mapped to -1 and ``classes_[1]`` to +1.
    coef_ : ndarray of shape (1, n_features)
        The released theta.
    intercept_ : float
        Always 0.0.
{_ATTR_DOC}
    Raises
    ------
    BoundsViolation
        A row with ``||x_i||_1 > 1``, or labels outside ``classes`` (nothing is clipped).
    NoHaltError
        No level passed and ``allow_no_halt`` is False.

    Privacy
    -------
    Ex-post differential privacy (Ligett et al. 2017, Definition 2.3) for
    replace-one neighbours in the domain ``||x_i||_1 <= 1``: ``eps_0 + eps_k`` for
    OutputNR stopping at level k (Theorem 3.4), ``E(k)`` for the DoublingMethod
    (Theorem A.2).  With probability at least ``1 - gamma`` the released theta
    has excess risk at most alpha.  ``predict_proba`` and ``decision_function``
    are post-processing of theta.  n, the number of features, the label set and
    the grid are treated as public.  Idealized numerics.

    References
    ----------
    K. Ligett, S. Neel, A. Roth, B. Waggoner, Z. S. Wu. "Accuracy First:
    Selecting a Differential Privacy Level for Accuracy-Constrained ERM".
    NeurIPS 2017.
    """

    def __init__(
        self,
        alpha: float,
        *,
        gamma: float = 0.1,
        lam: float = DEFAULT_LAMBDA,
        method: str = "outputnr",
        eps_list: Any = None,
        max_epsilon: float | None = None,
        calibration: str = "paper",
        classes: Any = None,
        allow_no_halt: bool = False,
        keep_diagnostics: bool = False,
        random_state: Any = None,
    ) -> None:
        self.alpha = alpha
        self.gamma = gamma
        self.lam = lam
        self.method = method
        self.eps_list = eps_list
        self.max_epsilon = max_epsilon
        self.calibration = calibration
        self.classes = classes
        self.allow_no_halt = allow_no_halt
        self.keep_diagnostics = keep_diagnostics
        self.random_state = random_state

    def __sklearn_is_fitted__(self) -> bool:
        return hasattr(self, "coef_")

    def _map_labels(self, y_arr: NDArray[Any]) -> tuple[NDArray[Any], NDArray[np.int8]]:
        return map_binary_labels(y_arr, self.classes, type(self).__name__)

    def fit(self, X: ArrayLike, y: ArrayLike) -> AccuracyFirstLogisticRegression:
        """Run OutputNR or the DoublingMethod once on (X, y).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows with ``||x_i||_1 <= 1``.
        y : array-like of shape (n_samples,)
            Labels of two classes (any type), mapped through ``classes_``.

        Returns
        -------
        self
        """
        _reset(self)
        alpha = check_positive(self.alpha, "alpha")
        gamma = _check_gamma(self.gamma)
        lam = check_positive(self.lam, "lam")
        method = check_choice(self.method, "method", ("outputnr", "doubling"))
        calibration = _check_calibration(self.calibration, method)
        allow = _check_bool(self.allow_no_halt, "allow_no_halt")
        keep = check_diagnostics_flag(self.keep_diagnostics, "keep_diagnostics")
        rng = check_rng(self.random_state)  # type check only: nothing is drawn here
        X_arr, y_arr = validate_private_data(self, X, y, dtype=np.float64, ensure_all_finite=True)
        classes, y_pm = self._map_labels(y_arr)
        common = {"gamma": gamma, "lam": lam, "eps_list": self.eps_list, "random_state": rng,
                  "return_diagnostics": keep, "max_epsilon": self.max_epsilon}
        if method == "outputnr":
            result = outputnr(
                X_arr, y_pm, alpha, allow_no_halt=allow, calibration=calibration, **common
            )
        else:
            result = doubling(X_arr, y_pm, alpha, task="logistic", allow_no_halt=allow, **common)
        self.classes_ = classes
        self.coef_ = np.array(result.theta, dtype=np.float64).reshape(1, -1)
        self.intercept_ = 0.0
        _store(self, result)
        return self

    def decision_function(self, X: ArrayLike) -> NDArray[np.float64]:
        """Scores ``<x, theta>``; > 0 means ``classes_[1]``."""
        check_is_fitted(self)
        X_arr = validate_private_data(
            self, X, dtype=np.float64, ensure_all_finite=True, reset=False)
        return X_arr @ self.coef_[0]

    def predict(self, X: ArrayLike) -> NDArray[Any]:
        """``classes_[1]`` where the score is > 0, else ``classes_[0]``."""
        scores = self.decision_function(X)
        return self.classes_[(scores > 0).astype(np.intp)]

    def predict_proba(self, X: ArrayLike) -> NDArray[np.float64]:
        """``[1 - sigmoid(score), sigmoid(score)]`` per row (the logistic model)."""
        p1 = expit(self.decision_function(X))
        return np.column_stack([1.0 - p1, p1])
