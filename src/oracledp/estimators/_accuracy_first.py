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
from sklearn.base import RegressorMixin

from oracledp._diagnostics import split_diagnostics
from oracledp._errors import PrivacyWarning
from oracledp._guidance import EPSILON_CAP
from oracledp._params import store_init_arguments
from oracledp._validation import check_bool, check_choice, check_positive
from oracledp.erm import AccuracyFirstResult, covnr, doubling, outputnr
from oracledp.erm._framework import DEFAULT_LAMBDA
from oracledp.erm._sensitivity import CALIBRATIONS, _check_gamma
from oracledp.estimators._base import (
    PrivateEstimator,
    PrivateLogisticClassifier,
    result_attributes,
    validate_private_data,
)
from oracledp.privacy._accountant import begin_release

__all__ = ["AccuracyFirstLogisticRegression", "AccuracyFirstRidge"]

_RELEASE_WARNING = (
    "{name}: no privacy level passed the accuracy test; the non-private optimum theta* was "
    "released because allow_no_halt=True. Its ex-post privacy loss is infinite: the model "
    "carries NO differential privacy guarantee."
)


def _check_calibration(calibration: object, method: str) -> str:
    cal = check_choice(calibration, "calibration", CALIBRATIONS)
    if method == "doubling" and cal != "paper":
        raise ValueError(
            "calibration applies to the noise-reduction methods only; the DoublingMethod's "
            "tests follow Theorem A.2 (use calibration='paper')"
        )
    return cal


class _AccuracyFirst(PrivateEstimator):
    """The fit of both Accuracy First estimators: checks, one search, the ex-post release.

    A subclass names its two methods (``_METHODS``: its noise-reduction algorithm,
    ``"covnr"`` or ``"outputnr"``, then ``"doubling"``) and its ``doubling`` task (``_TASK``).
    """

    _METHODS: tuple[str, str]
    _TASK: str

    def _check_params(self) -> dict[str, Any]:
        alpha = check_positive(self.alpha, "alpha")
        gamma = _check_gamma(self.gamma)
        lam = check_positive(self.lam, "lam")
        method = check_choice(self.method, "method", self._METHODS)
        calibration = _check_calibration(self.calibration, method)
        allow = check_bool(self.allow_no_halt, "allow_no_halt")
        cap = None if self.max_epsilon is None else check_positive(self.max_epsilon,
                                                                   "max_epsilon")
        return {"alpha": alpha, "gamma": gamma, "lam": lam, "method": method,
                "calibration": calibration, "allow": allow, "cap": cap}

    def _search(self, params: dict[str, Any], X: NDArray[np.float64],
                y: NDArray[Any]) -> AccuracyFirstResult:
        """One run of the chosen method on the validated data: the only place noise is drawn.

        An active BudgetAccountant is declared the cap ``max_epsilon`` (the most any run,
        released or refused, can lose); it is charged the realised ex-post loss afterwards.
        """
        begin_release(self, params["cap"], rng=params["rng"], ex_post=True)
        common = {"gamma": params["gamma"], "lam": params["lam"], "eps_list": self.eps_list,
                  "random_state": params["rng"], "return_diagnostics": params["keep"],
                  "max_epsilon": self.max_epsilon}
        if params["method"] == "doubling":
            return doubling(X, y, params["alpha"], task=self._TASK,
                            allow_no_halt=params["allow"], **common)
        noise_reduction = covnr if params["method"] == "covnr" else outputnr
        return noise_reduction(X, y, params["alpha"], allow_no_halt=params["allow"],
                               calibration=params["calibration"], **common)

    def _keep_release(self, result: AccuracyFirstResult, **model: Any) -> None:
        """Store the model, then the run and its ex-post loss; warn if theta* was released."""
        result, diagnostics = split_diagnostics(result)
        self._set_fitted(
            diagnostics,
            **model,
            intercept_=0.0,
            result_=result,
            **result_attributes(result, "ex_post", "guarantee", "epsilon", "stopping_index",
                                "eps_grid"),
        )
        if not result.guarantee.holds:
            warnings.warn(
                _RELEASE_WARNING.format(name=type(self).__name__), PrivacyWarning, stacklevel=3
            )
        elif self.max_epsilon is None and result.guarantee.epsilon > EPSILON_CAP:
            warnings.warn(
                f"{type(self).__name__} released with an ex-post loss of "
                f"{result.guarantee.epsilon:.4g}, "
                f"above {EPSILON_CAP:g} (the cap the command line applies by default: beyond "
                "it the guarantee says little). No max_epsilon was given; pass max_epsilon= to "
                "cap the loss before any noise is drawn.", PrivacyWarning, stacklevel=3)


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
        more (:func:`oracledp.erm._theory.cap_levels`).  ``fit`` raises ValueError, before
        any randomness, when even the first level exceeds it, or when (default grid,
        ``allow_no_halt=False``) the cap leaves only levels more than 10,000 times below
        the theory epsilon of ``alpha``, where the search would spend privacy on hypotheses
        that are mostly noise (:func:`oracledp.erm._theory.check_theory_reachable`; the n
        this needs: ``oracledp models``).  None: no cap (the command line's
        ``--max-epsilon`` defaults to :data:`oracledp._guidance.EPSILON_CAP`).
    calibration : {"paper", "one-sided"}, default="paper"
        How the accuracy test's epsilon is set for the noise-reduction methods
        (CovNR/OutputNR): the paper's ``16 Delta ln(2T/gamma)/alpha`` or the
        one-sided union bound ``Delta (12 ln(1/gamma) + 8 ln(T/2))/alpha`` (about
        half; same accuracy guarantee, see
        :func:`oracledp.erm._sensitivity.iat_epsilon`).  Must be "paper" with
        ``method="doubling"``.
    allow_no_halt : bool, default=False
        If no level passes the test the algorithms would release the non-private
        optimum: ``fit`` raises :class:`~oracledp.erm.NoHaltError` instead.  With
        True the optimum is kept, a :class:`~oracledp._errors.PrivacyWarning` is
        issued and ``guarantee_.holds`` is False (``epsilon_ = inf``).
    keep_diagnostics : bool, default=False
        Keep the run's :class:`~oracledp._diagnostics.NonPrivateDiagnostics`
        (``excess_risk`` on the training data, ``timings``) as ``diagnostics_``, for
        research: issues a :class:`~oracledp._errors.DiagnosticsWarning` and sets
        ``guarantee_.diagnostics_released``; ``diagnostics_`` is never pickled.
    random_state : None, int, SeedSequence or numpy Generator, default=None
        Source of all noise.  An int seed reproduces the fit; a Generator is
        consumed.  :func:`sklearn.base.clone` deep-copies a Generator, so clones
        draw identical noise: use int seeds or None in cross-validation.
"""

_ATTR_DOC = """
    intercept_ : float
        Always 0.0.
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

_REFERENCES_DOC = """    References
    ----------
    K. Ligett, S. Neel, A. Roth, B. Waggoner, Z. S. Wu. "Accuracy First:
    Selecting a Differential Privacy Level for Accuracy-Constrained ERM".
    NeurIPS 2017.
"""


class AccuracyFirstRidge(RegressorMixin, _AccuracyFirst):
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
        The released theta.{_ATTR_DOC}
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

{_REFERENCES_DOC}
    Examples
    --------
    Rows with ``||x_i||_1 <= 1`` and targets in [-1, 1]; the target excess risk is fixed,
    the privacy loss is measured (tiny data pay a large loss):

    >>> import numpy as np
    >>> from oracledp.estimators import AccuracyFirstRidge
    >>> X = np.array([[0.5, 0.25], [0.25, 0.5], [0.5, 0.5], [-0.5, -0.25], [-0.25, -0.5]])
    >>> # five records: a loss in the thousands, within an explicit cap (without one, a
    >>> # release above 10 warns)
    >>> reg = AccuracyFirstRidge(alpha=0.5, max_epsilon=2e4, random_state=0)
    >>> reg = reg.fit(X, X.sum(axis=1))
    >>> print(reg.guarantee_.describe())  # doctest: +ELLIPSIS
    ex-post loss ..., replace-one neighbours; Ligett et al. 2017 (Accuracy First), Algorithm 3 ...
    >>> reg.epsilon_ == reg.guarantee_.epsilon == reg.ex_post_.epsilon
    True
    """

    _METHODS = ("covnr", "doubling")
    _TASK = "ridge"

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
        store_init_arguments(self, locals())

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
        params = self._start_fit()
        X_arr, y_arr = validate_private_data(
            self, X, y, dtype=np.float64, ensure_all_finite=True, y_numeric=True
        )
        result = self._search(params, X_arr, y_arr)
        self._keep_release(result, coef_=np.array(result.theta, dtype=np.float64))
        return self

    def predict(self, X: ArrayLike) -> NDArray[np.float64]:
        """``X @ coef_``."""
        return self._new_data(X) @ self.coef_


class AccuracyFirstLogisticRegression(_AccuracyFirst, PrivateLogisticClassifier):
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
    n_features : int or None, default=None
        The number of features the public schema declares (``make_estimator`` passes the
        schema's); ``fit`` refuses an X of another width, before any noise.  ``None``
        accepts any width (read from X and treated as public).

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        ``classes_[0]`` is mapped to -1 and ``classes_[1]`` to +1.
    coef_ : ndarray of shape (1, n_features)
        The released theta.{_ATTR_DOC}
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

{_REFERENCES_DOC}
    Examples
    --------
    >>> from oracledp.estimators import AccuracyFirstLogisticRegression
    >>> X = [[0.5, 0.25], [0.25, 0.5], [0.5, 0.5], [-0.5, -0.25], [-0.25, -0.5], [-0.5, 0.0]]
    >>> clf = AccuracyFirstLogisticRegression(alpha=0.5, method="doubling", max_epsilon=2e3,
    ...                                       random_state=0)  # six records: a loss near 1,000
    >>> clf.fit(X, [1, 1, 1, 0, 0, 0]).guarantee_.kind
    <GuaranteeKind.EX_POST: 'ex-post'>
    >>> clf.guarantee_.describe().split("; ")[0]  # doctest: +ELLIPSIS
    'ex-post loss ..., replace-one neighbours'
    >>> clf.predict([[0.5, 0.5], [-0.5, -0.5]])
    array([1, 0])
    """

    _METHODS = ("outputnr", "doubling")
    _TASK = "logistic"

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
        n_features: int | None = None,
        allow_no_halt: bool = False,
        keep_diagnostics: bool = False,
        random_state: Any = None,
    ) -> None:
        store_init_arguments(self, locals())

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
        params = self._start_fit()
        X_arr, classes, y_pm = self._training_data(X, y, check_targets=False)
        result = self._search(params, X_arr, y_pm)
        self._keep_release(
            result, classes_=classes, coef_=np.array(result.theta, dtype=np.float64).reshape(1, -1)
        )
        return self
