"""A scikit-learn classifier around OPDisc (Neel, Roth, Vietri, Wu, ICML 2020, Algorithm 1).

The estimator adds nothing to the mechanism: the whole of ``fit`` (validation first, the
exact problem, one call to :func:`~oracledp.learners.opdisc`) is the exact learners' one base,
:class:`~oracledp.estimators._exact.ExactHalfspaceClassifier`.  OPDisc keeps its parameters
(``tau``, ``bound``, ``radius``, ``calibration``), its rule for W and its noise attributes.
"""

from __future__ import annotations

from typing import Any

from oracledp._params import store_init_arguments
from oracledp.estimators._exact import (
    ExactHalfspaceClassifier,
    build_oracle,
    public_schema,
    round_to_grid,
)
from oracledp.learners._opdisc import opdisc
from oracledp.oracles._base import Oracle
from oracledp.oracles._halfspace import FeatureSchema

__all__ = ["OPDiscClassifier", "build_oracle", "public_schema", "round_to_grid"]


class OPDiscClassifier(ExactHalfspaceClassifier):
    """Differentially private 0/1-loss linear classifier (OPDisc, exact oracle).

    Draws ``eta ~ N(0, sigma^2 I_{d+1})`` and returns the exact minimizer of
    ``#errors(w) - <eta, pi(w)>`` over the integer grid
    ``W = {tau k : |tau k_j| <= bound, ||tau k||_2 <= radius}`` declared by ``space``
    (one call to an optimization oracle).  The model is a halfspace through the origin: there is
    no intercept (``intercept_ = 0.0``); with one-hot encoded categorical
    features the one-hot blocks play the role of an intercept.

    Parameters
    ----------
    epsilon : float, default=1.0
        Privacy parameter epsilon > 0 of the whole fit.
    delta : float or None, default=None
        Privacy parameter delta in (0, 1).  ``None`` means ``1 / n**2`` with ``n``
        the number of training rows.  This default depends on n, which is treated
        as public, as in the paper's experiments; pass a fixed delta if the
        dataset size must stay private.
    space : {"auto", "paper"}, str "norm2=R[,bound=B]" or dict, default="auto"
        The parameter space W, a declared public parameter (never read from the data).
        ``"auto"``: ``||w||_2^2 <= min(d, 4)`` (so ``|w_j| <= 2``), a rule on the number
        of features d alone; for ``d <= 4`` it is the paper's W.  ``"paper"``: the ICML
        2020 experiment's ``|w_j| <= floor(sqrt d)``, ``||w||_2 <= sqrt d``.
        ``"norm2=R"`` / ``"norm2=R,bound=B"`` / ``{"norm2": R, "bound": B}``: the points
        with ``||w||_2^2 <= R`` (and ``|w_j| <= B``).  sigma grows with D^2 (D the largest
        norm in W), so a compact W means less noise and an easier oracle: on the bundled
        health_insurance table at eps 1, sigma is 894 for the paper's W and 114 for
        ``"auto"``, which certified every measured draw in seconds and was more accurate
        (docs/choosing-a-model.md).  W, |W| and D are recorded in ``guarantee_.notes``
        and ``space_``.
    tau : float, default=1.0
        Spacing of the parameter grid (the space is tau-separated).
    bound : float or None, default=None
        Box bound ``|w_j| <= bound`` (the former way to declare W, kept: with ``bound``
        or ``radius`` set, ``space`` must stay ``"auto"`` and W is the paper's with these
        bounds); ``None`` means ``floor(sqrt(d))`` when ``radius`` is set.
    radius : float or None, default=None
        Ball bound ``||w||_2 <= radius``; ``None`` means ``sqrt(d)`` when ``bound`` is set.
    oracle : str or Oracle, default="highs"
        Oracle name (see :func:`oracledp.oracles.available_oracles`; the command
        line's ``--solver``) or an :class:`~oracledp.oracles.Oracle` instance, used
        as configured.
    time_limit : float or None, default=None
        Seconds per oracle call, passed to backends that take a time limit (not
        to ``"brute"``, which enumerates W, nor to an Oracle instance).  Given alone, it
        replaces the default work limit.
    work_limit : int or None, default=None
        Deterministic limit per oracle call, passed to backends that take one (the default
        ``"highs"``: LP relaxations + MIP solves + MIP nodes of the structured formulation,
        nodes of the branch-and-bound).  Unlike the time limit, whether a fit certifies
        under it is the same on every machine and load; see ``docs/oracles.md``.  With
        neither limit given (the default), ``"highs"`` gets its default work limit (about a
        minute of a quiet 2-core machine) and no time limit, so a release does not depend on
        what else the machine runs; a backend without a work limit gets 60 seconds.
    allow_uncertified : bool, default=False
        If the oracle does not certify an exact optimum within the time limit,
        ``fit`` raises :class:`~oracledp._errors.OracleFailure` and releases
        nothing.  With ``True`` the uncertified answer is kept, a
        :class:`~oracledp._errors.PrivacyWarning` is issued and
        ``guarantee_.holds`` is False.
    schema : FeatureSchema or None, default=None
        The public description of the features
        (:class:`~oracledp.oracles.FeatureSchema`: which columns are 0/1, the
        grid ``1/q`` and bound of the others).  Bundled datasets carry theirs
        (``load_adult().feature_schema``).  The data are checked against it
        before any noise is drawn (a violation raises BoundsViolation naming the
        column and the rule); the 0/1 columns choose the oracle's formulation.
        One of ``schema`` and ``feature_grid`` is required: reading grids or 0/1
        columns from the data would make refusals depend on private data.
    feature_grid : float or None, default=None
        A float ``g = p/q`` (e.g. ``1e-3``) rounds every non-binary feature to
        the nearest multiple of g, *both in fit and in decision_function/predict*.
        The rounding is a fixed public transform applied to each record on its
        own, so the privacy guarantee is unaffected; it is never applied unless
        asked for.  Without ``schema``, every column is then numeric on the grid
        ``1/q`` with the largest bound that keeps scores exact in float64; no real
        bound is declared, so whether the monolithic HiGHS bound is well scaled is
        then read from the data (declare a schema to make it public).
    classes : sequence of two labels or None, default=None
        The public label set, mapped in sorted order to -1 and +1.  ``None``
        reads it from ``y`` (sorted unique values), which treats the label set
        of the training data as public and refuses a ``y`` with one class; give
        ``classes`` to make the mapping data-independent (``y`` may then hold a
        single class, and labels outside ``classes`` raise BoundsViolation).
    keep_diagnostics : bool, default=False
        Keep the oracle's record and the timings as ``diagnostics_`` (a
        :class:`~oracledp._diagnostics.NonPrivateDiagnostics`), for research.
        They read the training data exactly (e.g. the number of training rows
        the released w misclassifies) and are NOT covered by the guarantee:
        a :class:`~oracledp._errors.DiagnosticsWarning` is issued,
        ``guarantee_.diagnostics_released`` is True, and ``diagnostics_`` is
        dropped when the estimator is pickled or deep-copied.
    calibration : {"proven", "paper"}, default="proven"
        How sigma is chosen.  ``"proven"``: the smallest multiplier with a proven
        delta bound (``docs/proofs/opdisc-calibration.md``).  ``"paper"``:
        Theorem 1's sigma, for reproducing the paper only; it is not private for
        wide W, so the fit issues a PrivacyWarning and ``guarantee_.holds`` is False.
    random_state : None, int, SeedSequence or numpy Generator, default=None
        Source of the noise.  ``None`` draws fresh noise at every fit; an int
        seed reproduces the fit; a Generator is consumed (successive fits draw
        new noise).  Note that :func:`sklearn.base.clone` deep-copies a
        Generator, so clones (cross-validation, grid search) draw *identical*
        noise: use int seeds, or None, there.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        The sorted class labels; ``classes_[0]`` is mapped to -1 and
        ``classes_[1]`` to +1 (an explicit mapping, whatever the labels are).
    coef_ : ndarray of shape (1, n_features)
        The released parameter vector w.
    intercept_ : float
        Always 0.0 (the model has no intercept).
    feature_grid_ : Fraction or None
        The grid step used in fit, as an exact fraction (1e-3 -> 1/1000);
        decision_function and predict round with it.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when X was a DataFrame with string column names.
    guarantee_ : PrivacyGuarantee
        (epsilon, delta)-DP statement of this fit, ``requires_exact_oracle=True``; its
        ``notes`` name the parameter space W, |W| and D.
    space_ : IntegerBall
        The parameter space W of the fit (public: a function of ``space``, ``tau``,
        ``bound``, ``radius`` and d only).
    space_description_ : str
        W, how it was declared, |W| and D in one line (as in ``guarantee_.notes``).
    sigma_ : float
        Standard deviation of the objective noise.
    calibration_ : OPDiscCalibration
        How sigma was chosen (public parameters only): the multiplier m, its ratio
        to Theorem 1's, the proven delta bound and which bound was used.
    result_ : OPDiscResult
        The result of :func:`~oracledp.learners.opdisc` (w, sigma, guarantee; its
        ``diagnostics`` is always None).
    diagnostics_ : NonPrivateDiagnostics
        Only with ``keep_diagnostics=True``: ``oracle`` (the
        :class:`~oracledp.oracles.OracleResult`: training loss of w, objective,
        bound, gap, status, wall time), ``oracle_status`` (its summary dict) and
        ``timings``.  NOT private; never pickled with the estimator.

    Raises
    ------
    ValueError, TypeError
        For invalid parameters or data, before any noise is drawn: y with one
        class or more than two classes, non-finite X, a non-rational feature
        without ``feature_grid``, an unknown oracle name.
    OracleFailure
        When the oracle does not certify the optimum (unless
        ``allow_uncertified=True``).

    Notes
    -----
    ``predict`` sends a score of exactly 0 to ``classes_[0]``, as scikit-learn's
    linear classifiers do (the training objective counts such points as errors
    for both labels).

    Privacy
    -------
    (epsilon, delta)-DP with respect to replacing one training record
    (Algorithm 1 of [NRVW20] with the calibration proven in
    ``docs/proofs/opdisc-calibration.md``; Theorem 1's own sigma is not private for
    wide W), provided the oracle returns the exact minimizer;
    uncertified answers are refused unless ``allow_uncertified=True``.  As in
    scikit-learn, the label set ``classes_``, the number of features and (with
    ``delta=None``) the number of rows are read from the data and treated as
    public; a fit refused because y holds a single class is outside the
    guarantee.  Noise is sampled with numpy (idealized numerics).

    References
    ----------
    .. [NRVW20] S. Neel, A. Roth, G. Vietri, Z. S. Wu. "Oracle Efficient Private
       Non-Convex Optimization". ICML 2020.

    Examples
    --------
    Six rows on the public grid 1/2, solved exactly by the brute-force oracle (it
    enumerates W; fine for two features):

    >>> import numpy as np
    >>> from oracledp.estimators import OPDiscClassifier
    >>> X = np.array([[2, 1], [1, 2], [2, 2], [-2, -1], [-1, -2], [-2, 0]]) / 2
    >>> y = ["yes", "yes", "yes", "no", "no", "no"]
    >>> clf = OPDiscClassifier(epsilon=1.0, oracle="brute", feature_grid=0.5, random_state=0)
    >>> print(clf.fit(X, y).guarantee_.describe())  # doctest: +ELLIPSIS
    (1, 0.0278)-DP, replace-one neighbours; assumes an exact oracle; Neel, Roth, Vietri, ...
    >>> clf.coef_, clf.predict([[1.0, 0.5], [-0.5, -1.0]])
    (array([[1., 0.]]), array(['yes', 'no'], dtype='<U3'))
    """

    def __init__(
        self,
        epsilon: float = 1.0,
        delta: float | None = None,
        *,
        space: Any = "auto",
        tau: float = 1.0,
        bound: float | None = None,
        radius: float | None = None,
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

    _mechanism = staticmethod(opdisc)
    _space_model = "opdisc"

    def _noise_attributes(self, result: Any) -> dict[str, Any]:
        """The fitted attributes that describe the mechanism's noise."""
        return {"sigma_": float(result.sigma), "calibration_": result.calibration}
