"""A scikit-learn classifier around OPDisc (Neel, Roth, Vietri, Wu, ICML 2020, Algorithm 1).

The estimator adds nothing to the mechanism: it validates every parameter and
the data, maps the two class labels to {-1, +1}, optionally rounds features to
a public grid, builds the exact 0/1-loss
:class:`~oracledp.oracles.HalfspaceProblem` and calls
:func:`~oracledp.learners.opdisc` once.  The privacy statement of the fit is
stored as ``guarantee_``.

Why validation comes first: a fit that is refused must neither consume
randomness nor release anything, so all checks (parameters, oracle name, data,
label set, rationality of the features) run before the noise vector is drawn.
"""

from __future__ import annotations

import inspect
import warnings
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from oracledp._diagnostics import NonPrivateDiagnostics, split_diagnostics
from oracledp._errors import PrivacyWarning
from oracledp._validation import check_positive
from oracledp.estimators._base import (
    PrivateBinaryClassifier,
    check_privacy_parameters,
    delta_for,
    store_init_arguments,
)
from oracledp.estimators._space_spec import (
    check_space,
    describe_space,
    parameter_space,
    space_label,
    with_space_note,
)
from oracledp.learners._opdisc import OPDiscResult, opdisc
from oracledp.oracles._base import Oracle, check_work_limit
from oracledp.oracles._halfspace import FeatureSchema, HalfspaceProblem
from oracledp.oracles._registry import check_solver_name, make_oracle
from oracledp.oracles._space import IntegerBall
from oracledp.privacy._accountant import begin_release

__all__ = ["OPDiscClassifier"]

_GRID_MAX_DENOMINATOR = 10**6


def _grid_fraction(grid: object) -> Fraction:
    """``feature_grid`` as an exact fraction p/q (q <= 10**6), e.g. 1e-3 -> 1/1000."""
    g = check_positive(grid, "feature_grid")
    frac = Fraction(g).limit_denominator(_GRID_MAX_DENOMINATOR)
    if float(frac) != g:
        raise ValueError(
            f"feature_grid must be a simple rational step such as 1e-3, 0.01 or 0.25 "
            f"(p/q with q <= {_GRID_MAX_DENOMINATOR}), got {grid!r}"
        )
    return frac


def round_to_grid(X: NDArray[np.float64], grid: Fraction) -> NDArray[np.float64]:
    """Round every entry of X to the nearest multiple of ``grid`` (= p/q).

    The result is computed as ``(m * p) / q`` with integer-valued floats ``m``, so
    each entry is the correctly rounded float of the rational ``m p / q`` and the
    exact oracle reads it back as that rational.
    """
    p, q = grid.numerator, grid.denominator
    m = np.rint(X * q / p)
    return (m * p) / q


def _accepts_option(cls: type, option: str) -> bool:
    """Whether ``cls(option=...)`` is accepted (a named parameter or ``**kwargs``)."""
    try:
        params = inspect.signature(cls).parameters
    except (TypeError, ValueError):  # pragma: no cover - builtins without a signature
        return False
    return option in params or any(
        p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()
    )


def build_oracle(oracle: str | Oracle, time_limit: float | None,
                 work_limit: int | None = None) -> Oracle:
    """The oracle for ``oracle`` (a backend name or an instance), given ``time_limit`` and
    ``work_limit`` only if its backend takes them.

    The brute-force oracle enumerates W and has neither limit; an
    :class:`~oracledp.oracles.Oracle` instance is used exactly as configured.
    """
    if not isinstance(oracle, str):
        return make_oracle(oracle)
    built = make_oracle(oracle)
    options: dict[str, Any] = {}
    if time_limit is not None and _accepts_option(type(built), "time_limit"):
        options["time_limit"] = time_limit
    if work_limit is not None and _accepts_option(type(built), "work_limit"):
        options["work_limit"] = work_limit
    return make_oracle(oracle, **options) if options else built


def public_schema(schema: object, grid: Fraction | None, d: int, k_max: int,
                  owner: str) -> FeatureSchema:
    """The public feature schema of a fit: the caller's, or all columns on ``grid``.

    Reads only parameters and the number of columns, never the data.
    """
    if schema is not None:
        if not isinstance(schema, FeatureSchema):
            raise TypeError(f"schema must be a FeatureSchema, got {type(schema).__name__}")
        if schema.d != d:
            raise ValueError(f"{owner}: the schema declares {schema.d} columns but X has {d}")
        if grid is not None and any(q % grid.denominator for q in
                                    np.array(schema.denominators)[~schema.binary_mask]):
            raise ValueError(f"{owner}: feature_grid {grid} is not on every numeric column's "
                             "declared grid; choose a grid 1/q whose q divides theirs")
        return schema
    if grid is None:
        raise ValueError(
            f"{owner} needs a public description of the features: pass schema= (a "
            "FeatureSchema; bundled datasets have .feature_schema) or feature_grid= (e.g. "
            "1e-3). Reading grids or 0/1 columns from the training data would make the "
            "fit's refusals depend on private data."
        )
    q = grid.denominator
    bound = float(2**52 // (q * d * max(k_max, 1)))  # the largest bound that stays exact
    return FeatureSchema.grid(d, Fraction(1, q), bound, bounds_declared=False)


def _check_optional_positive(value: object, name: str) -> float | None:
    return None if value is None else check_positive(value, name)


class OPDiscClassifier(PrivateBinaryClassifier):
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
    time_limit : float or None, default=60.0
        Seconds per oracle call, passed to backends that take a time limit (not
        to ``"brute"``, which enumerates W, nor to an Oracle instance).
    work_limit : int or None, default=None
        Deterministic limit per oracle call, passed to backends that take one (the default
        ``"highs"``: LP relaxations + MIP solves + MIP nodes of the structured formulation,
        nodes of the branch-and-bound).  Unlike the time limit, whether a fit certifies
        under it is the same on every machine and load; see ``docs/oracles.md``.
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
        time_limit: float | None = 60.0,
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

    # ------------------------------------------------------------------------------------------
    @staticmethod
    def _transform(X: NDArray[np.float64], grid: Fraction | None,
                   schema: FeatureSchema) -> NDArray[np.float64]:
        """Round the non-binary columns to ``grid`` (if set); 0/1 columns stay as they are."""
        if grid is None:
            return X
        numeric = ~schema.binary_mask
        out = X.copy()
        out[:, numeric] = round_to_grid(X[:, numeric], grid)
        return out

    def fit(self, X: ArrayLike, y: ArrayLike,
            sample_weight: ArrayLike | None = None) -> OPDiscClassifier:
        """Fit the private classifier (one OPDisc run).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Finite features (exact small rationals unless ``feature_grid`` is set).
        y : array-like of shape (n_samples,)
            Labels of exactly two classes (any type: ints, strings...).
        sample_weight : array-like of shape (n_samples,) or None, default=None
            Record counts: row ``i`` (with label ``y[i]``) stands for ``sample_weight[i]``
            identical training records, e.g. the distinct rows of a large table with their
            multiplicities (:meth:`oracledp.tabular.AggregatedTable.weighted_rows`).  The
            objective counts misclassified records, so the fit is exactly the fit on the
            table that repeats each row that many times: the same exact problem (built by
            :meth:`~oracledp.oracles.HalfspaceProblem.from_counts`), the same release for
            the same ``random_state``, and ``delta=None`` means ``1/n**2`` with ``n`` the
            total count.  Each count must be a whole number >= 0 (a float array of whole
            numbers is accepted; a row with count 0 is absent); anything else is refused
            with one ValueError before any noise is drawn.  ``None`` counts every row once.

        Returns
        -------
        self

        Privacy
        -------
        The guarantee is about records: the counts must be the true multiplicities of the
        records, so that each record still counts once.  A weight used as an importance
        weight (one record given weight 5) makes that record count as 5 records: it is then
        protected only as a group of 5 (group privacy: 5 epsilon and a larger delta).
        """
        params = self._start_fit()  # 1. Parameters (no data, no randomness yet).

        # 2. Data, labels and record counts.
        X_arr, classes, y_pm, counts = self._counted_training_data(X, y, sample_weight)
        n, d = int(counts.sum()), X_arr.shape[1]
        n_pos = np.where(y_pm == 1, counts, 0)
        n_neg = np.where(y_pm == 1, 0, counts)

        def build(space: IntegerBall, schema: FeatureSchema,
                  grid: Fraction | None) -> HalfspaceProblem:
            # the exact problem from the rows and their counts (equal rows are merged)
            return HalfspaceProblem.from_counts(self._transform(X_arr, grid, schema), n_pos,
                                                n_neg, space, schema=schema)

        return self._fit_problem(params, n, d, classes, build)

    # --- the steps of fit -----------------------------------------------------------------------
    def _check_params(self) -> dict[str, Any]:
        """The checks of step 1, run by :meth:`_start_fit`: every parameter, once."""
        epsilon = check_privacy_parameters(self.epsilon, self.delta)
        space = check_space(self.space, self._space_model)
        tau = check_positive(self.tau, "tau")
        bound = _check_optional_positive(self.bound, "bound")
        radius = _check_optional_positive(self.radius, "radius")
        if (bound is not None or radius is not None) and space.kind != "auto":
            raise ValueError(f"{type(self).__name__}: pass either space= or bound=/radius=, "
                             f"not both (got space={self.space!r} with bound={self.bound!r}, "
                             f"radius={self.radius!r})")
        time_limit = _check_optional_positive(self.time_limit, "time_limit")
        work_limit = check_work_limit(self.work_limit)
        if not isinstance(self.allow_uncertified, (bool, np.bool_)):
            raise TypeError(
                f"allow_uncertified must be a bool, got {type(self.allow_uncertified).__name__}"
            )
        if self.calibration not in ("proven", "paper"):
            raise ValueError(
                f"calibration must be 'proven' or 'paper', got {self.calibration!r}")
        grid = None if self.feature_grid is None else _grid_fraction(self.feature_grid)
        check_solver_name(self.oracle, "oracle")
        return {"epsilon": epsilon, "space": space, "tau": tau, "bound": bound,
                "radius": radius, "time_limit": time_limit, "work_limit": work_limit,
                "grid": grid}

    def _fit_problem(self, params: dict[str, Any], n: int, d: int, classes: NDArray[Any],
                     build: Any) -> OPDiscClassifier:
        """Steps 3-4 of fit: the exact problem (``build(space, schema, grid)``), one release."""
        delta = delta_for(self.delta, n)
        grid = params["grid"]

        # 3. The exact problem over the public schema (refuses data that violate it).
        space, how = self._make_space(d, params)
        description = describe_space(space, how)
        schema = public_schema(self.schema, grid, d, space.k_max, type(self).__name__)
        problem = build(space, schema, grid)
        oracle = build_oracle(self.oracle, params["time_limit"], params["work_limit"])

        # 4. The mechanism: the only place noise is drawn (declared to an active accountant).
        begin_release(self, params["epsilon"], self._declared_delta(delta), rng=params["rng"])
        result, diagnostics = split_diagnostics(
            self._release(problem, params["epsilon"], delta, oracle, params["rng"],
                          return_diagnostics=params["keep"]))
        if not result.certified:
            warnings.warn(
                f"{type(self).__name__}: the oracle did not certify an exact optimum; the "
                "coefficients were released because allow_uncertified=True and carry NO "
                "differential privacy guarantee.",
                PrivacyWarning,
                stacklevel=3,
            )

        if diagnostics is not None:
            diagnostics = NonPrivateDiagnostics(diagnostics.mechanism, {
                **diagnostics.to_dict(), "oracle_status": diagnostics["oracle"].summary()})
        self._set_fitted(
            diagnostics,
            classes_=classes,
            feature_grid_=grid,
            feature_schema_=schema,
            coef_=np.asarray(result.w, dtype=np.float64).reshape(1, d),
            intercept_=0.0,
            guarantee_=with_space_note(result.guarantee, description),
            space_=space,
            space_description_=description,
            result_=result,
            **self._noise_attributes(result),
        )
        return self

    def _declared_n_features(self) -> int | None:
        """The public schema's number of columns (checked with the data, as for every model)."""
        return self.schema.d if isinstance(self.schema, FeatureSchema) else None

    # --- hooks for estimators built on other oracle mechanisms --------------------------------
    def _declared_delta(self, delta: float) -> float:
        """The delta of the release (what a BudgetAccountant is declared)."""
        return delta

    #: Which rule of :mod:`oracledp.estimators._space_spec` declares W.
    _space_model = "opdisc"

    def _make_space(self, d: int, params: dict[str, Any]) -> tuple[IntegerBall, str]:
        """W (public: parameters and d only) and how it was declared, for the guarantee."""
        bound, radius, tau = params["bound"], params["radius"], params["tau"]
        if bound is not None or radius is not None:  # the former explicit bounds
            return (IntegerBall(d, bound=bound, radius=radius, tau=tau),
                    f"bound={bound!r}, radius={radius!r}")
        return (parameter_space(params["space"], d, model=self._space_model, tau=tau),
                space_label(params["space"], d, self._space_model))

    def _release(self, problem: HalfspaceProblem, epsilon: float, delta: float, oracle: Oracle,
                 rng: np.random.Generator, *, return_diagnostics: bool = False) -> OPDiscResult:
        return opdisc(problem, epsilon, delta, oracle=oracle, random_state=rng,
                      allow_uncertified=bool(self.allow_uncertified),
                      calibration=self.calibration,
                      return_diagnostics=return_diagnostics)

    def _noise_attributes(self, result: Any) -> dict[str, Any]:
        """The fitted attributes that describe the mechanism's noise."""
        return {"sigma_": float(result.sigma), "calibration_": result.calibration}

    def decision_function(self, X: ArrayLike) -> NDArray[np.float64]:
        """Scores ``<x, w>`` (after rounding to ``feature_grid`` if set), shape
        ``(n_samples,)``; > 0 means ``classes_[1]``.  Post-processing of the released w: no
        privacy cost.  A 0/1-loss halfspace has no probability model, so no ``predict_proba``."""
        X_arr = self._new_data(X)
        X_arr = self._transform(X_arr, self.feature_grid_, self.feature_schema_)  # as in fit
        return X_arr @ self.coef_[0]
