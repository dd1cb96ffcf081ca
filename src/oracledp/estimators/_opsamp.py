"""A scikit-learn classifier around OPSamp (Neel, Roth, Vietri, Wu, ICML 2020, Algorithm 2).

Private logistic regression by objective perturbation with sampling: the
estimator validates every parameter and the data, maps the two class labels to
{-1, +1}, builds the scaled logistic
:class:`~oracledp.oracles._convex.LogisticProblem` over a box or a ball and
calls :func:`~oracledp.learners.opsamp` once, with the certified convex
oracle :class:`~oracledp.oracles._convex.LogisticLinearOracle`.  The privacy
statement of the fit is stored as ``guarantee_``.

All checks (parameters, data, label set, feature bounds) run before any noise
is drawn, so a refused fit consumes no randomness and releases nothing.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from oracledp._diagnostics import split_diagnostics
from oracledp._docstrings import fill_doc
from oracledp._params import store_init_arguments
from oracledp._validation import check_choice, check_positive
from oracledp.estimators._base import (
    PrivateLogisticClassifier,
    check_privacy_parameters,
    delta_for,
    result_attributes,
)
from oracledp.learners._opsamp import OPSampResult, opsamp
from oracledp.oracles._convex import DOMAINS, LogisticLinearOracle
from oracledp.privacy._accountant import begin_release

__all__ = ["OPSampClassifier"]


@fill_doc
class OPSampClassifier(PrivateLogisticClassifier):
    """Differentially private logistic regression with OPSamp (approximate, certified oracle).

    Draws m noise vectors sigma_k with i.i.d. exponential entries of rate eta,
    computes certified alpha-approximate minimizers of
    ``sum_i l_i(w) - <sigma_k, w>`` over W (l_i the logistic loss divided by
    its public maximum M over W), averages them and adds Laplace noise of scale
    lambda/eps per coordinate.  The model is a linear classifier through the
    origin: ``intercept_ = 0.0`` (with one-hot encoded categorical features the
    one-hot blocks play the role of an intercept).  The loss is the logistic loss of w
    (divided by a public constant, which does not change the model), so w is a logistic
    model: ``predict_proba`` gives ``sigmoid(<x, w>)`` for ``classes_[1]``.

    Parameters
    ----------
    epsilon : float, default=1.0
        Privacy parameter epsilon > 0 of the whole fit.
    delta : float or None, default=None
        Privacy parameter delta in (0, 1); ``None`` means ``1 / n**2`` (n is then
        treated as public, as in the paper's experiments).
    m : int, default=20
        Number of oracle calls.  lambda shrinks like 1/sqrt(m) in its
        concentration term; the paper's theoretical m is far larger.
    eta : float or None, default=None
        Rate of the exponential objective noise (mean 1/eta); ``None`` uses
        Algorithm 2's eta (which needs ``beta``).
    beta : float, default=0.05
        Utility failure probability in Algorithm 2's default eta.
    domain : {"box", "ball"}, default="box"
        W = {|w_j| <= radius} or {||w||_2 <= radius}.
    radius : float, default=1.0
        Size of W.
    feature_bound : float, default=1.0
        Public bound on |x_ij|; rows violating it raise BoundsViolation.
    feature_l1_bound : float or None, default=None
        Public bound on ||x_i||_1 (default d * feature_bound); a smaller valid
        bound gives a smaller loss scale M and a larger Lipschitz constant G = B/M.
    alpha : float, default=1e-4
        Declared additive error of the oracle on the unnormalized objective;
        it enters lambda as alpha / (10 G).  Answers the oracle cannot certify
        within alpha raise OracleFailure.
    tol : float, default=1e-10
        Solver tolerance of the oracle.
    n_jobs : int, default=1
        Parallel oracle calls (joblib); the fit does not depend on it.
    classes : sequence of two labels or None, default=None
        The public label set, mapped in sorted order to -1 and +1.  ``None``
        reads it from ``y``; give ``classes`` to make the mapping data-independent.
    %(est_n_features)s
    keep_diagnostics : bool, default=False
        Keep the run's :class:`~oracledp._diagnostics.NonPrivateDiagnostics` (timings)
        as ``diagnostics_``, for research: issues a
        :class:`~oracledp._errors.DiagnosticsWarning` and sets
        ``guarantee_.diagnostics_released``; ``diagnostics_`` is never pickled.
    random_state : None, int, SeedSequence or numpy Generator, default=None
        Source of all noise (see :class:`~oracledp.estimators.OPDiscClassifier`
        for the caveat about cloning a Generator).

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        ``classes_[0]`` is mapped to -1 and ``classes_[1]`` to +1.
    coef_ : ndarray of shape (1, n_features)
        The released vector w (not projected onto W).
    intercept_ : float
        Always 0.0.
    guarantee_ : PrivacyGuarantee
        (epsilon, delta)-DP statement of this fit (Theorem 11).
    lambda_, gamma_, eta_, m_, alpha_ : float / int
        Laplace sensitivity bound, Lemma 10's gamma, exponential noise rate,
        number of oracle calls, declared oracle error.
    loss_scale_, lipschitz_ : float
        The public loss scale M and Lipschitz constant G = feature_bound / M.
    result_ : OPSampResult
        The released run (its ``diagnostics`` is always None).
    diagnostics_ : NonPrivateDiagnostics
        Only with ``keep_diagnostics=True``; NOT private, dropped when pickled.

    Privacy
    -------
    (epsilon, delta)-DP with respect to replacing one training record
    (Theorem 11 of Neel, Roth, Vietri, Wu, "Oracle Efficient Private Non-Convex
    Optimization", ICML 2020, with the conservative calibration documented in
    :mod:`oracledp.learners._opsamp` and proven in ``docs/proofs/opsamp-theorem11.md``), provided the oracle's answers are within
    the declared alpha, which each answer certifies (Frank-Wolfe gap); an
    uncertified answer raises OracleFailure.  The label set, the number of
    features and (with ``delta=None``) the number of rows are treated as public.
    Noise is sampled with numpy (idealized numerics).  ``decision_function``,
    ``predict_proba`` and ``predict`` are post-processing of w: they cost no privacy.

    Examples
    --------
    Features within the public bound ``|x_ij| <= 1``; three oracle calls:

    >>> import numpy as np
    >>> from oracledp.estimators import OPSampClassifier
    >>> X = np.array([[1.0, 0.5], [0.5, 1.0], [1.0, 1.0], [-1.0, -0.5], [-0.5, -1.0]])
    >>> clf = OPSampClassifier(epsilon=1.0, m=3, random_state=0).fit(X, [1, 1, 1, 0, 0])
    >>> print(clf.guarantee_.describe())  # doctest: +NORMALIZE_WHITESPACE
    (1, 0.04)-DP, replace-one neighbours; Neel, Roth, Vietri, Wu (ICML 2020),
    Algorithm 2 OPSamp, Theorem 11
    >>> clf.guarantee_.requires_exact_oracle  # each answer certifies its error alpha
    False
    """

    def __init__(
        self,
        epsilon: float = 1.0,
        delta: float | None = None,
        *,
        m: int = 20,
        eta: float | None = None,
        beta: float = 0.05,
        domain: str = "box",
        radius: float = 1.0,
        feature_bound: float = 1.0,
        feature_l1_bound: float | None = None,
        alpha: float = 1e-4,
        tol: float = 1e-10,
        n_jobs: int = 1,
        classes: Any = None,
        n_features: int | None = None,
        keep_diagnostics: bool = False,
        random_state: Any = None,
    ) -> None:
        store_init_arguments(self, locals())

    def _check_params(self) -> dict[str, Any]:
        epsilon = check_privacy_parameters(self.epsilon, self.delta)
        if isinstance(self.m, bool) or not isinstance(self.m, numbers.Integral) or self.m < 1:
            raise ValueError(f"m must be an integer >= 1, got {self.m!r}")
        eta = None if self.eta is None else check_positive(self.eta, "eta")
        check_choice(self.domain, "domain", DOMAINS)
        oracle = LogisticLinearOracle(
            self.domain, self.radius, alpha=self.alpha, tol=self.tol
        )  # validates radius, alpha, tol
        return {"epsilon": epsilon, "eta": eta, "oracle": oracle}

    def fit(self, X: ArrayLike, y: ArrayLike) -> OPSampClassifier:
        """Fit the private classifier (one OPSamp run with m oracle calls).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Finite features with |x_ij| <= feature_bound (and ||x_i||_1 <= feature_l1_bound).
        y : array-like of shape (n_samples,)
            Labels of two classes.

        Returns
        -------
        self
        """
        # 1. Parameters (no data, no randomness).
        params = self._start_fit()

        # 2. Data and labels.
        X_arr, classes, y_pm = self._training_data(X, y)
        n, _ = X_arr.shape
        delta = delta_for(self.delta, n)
        problem = params["oracle"].problem(
            X_arr, y_pm, feature_bound=self.feature_bound, feature_l1_bound=self.feature_l1_bound
        )  # BoundsViolation on out-of-bound records

        # 3. The mechanism: the only place noise is drawn (declared to an active accountant).
        begin_release(self, params["epsilon"], delta, rng=params["rng"])
        result: OPSampResult = opsamp(
            problem,
            params["epsilon"],
            delta,
            m=int(self.m),
            oracle=params["oracle"],
            eta=params["eta"],
            beta=self.beta,
            n_jobs=self.n_jobs,
            random_state=params["rng"],
            return_diagnostics=params["keep"],
        )
        result, diagnostics = split_diagnostics(result)
        self._set_fitted(
            diagnostics,
            classes_=classes,
            coef_=np.asarray(result.w, dtype=np.float64).reshape(1, -1),
            intercept_=0.0,
            **result_attributes(result, "guarantee", "lambda_", "gamma", "eta", "m", "alpha"),
            loss_scale_=problem.loss_scale,
            lipschitz_=problem.lipschitz,
            result_=result,
        )
        return self
