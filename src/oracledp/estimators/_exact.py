"""The one estimator base of the exact learners: OPDisc, RSPM and Gaussian RSPM.

Every exact classifier adds nothing to its mechanism: it validates every parameter and
the data, maps the two class labels to {-1, +1}, optionally rounds features to a public
grid, builds the exact 0/1-loss :class:`~oracledp.oracles.HalfspaceProblem` over the
declared parameter space W and calls its mechanism once
(:func:`~oracledp.learners.opdisc`, :func:`~oracledp.learners.rspm`,
:func:`~oracledp.learners.gaussian_rspm`).  The privacy statement of the fit is stored as
``guarantee_``.  :class:`ExactHalfspaceClassifier` does all of that; each model keeps only what
differs: its constructor (its parameters), its mechanism, its rule for W, whether it is pure
(no delta, no calibration) and the fitted attributes of its noise.

Why validation comes first: a fit that is refused must neither consume
randomness nor release anything, so all checks (parameters, oracle name, data,
label set, rationality of the features) run before the noise vector is drawn.
"""

from __future__ import annotations

import inspect
import math
import warnings
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.utils.multiclass import check_classification_targets

from oracledp._diagnostics import NonPrivateDiagnostics, split_diagnostics
from oracledp._errors import PrivacyWarning
from oracledp._validation import check_positive
from oracledp.estimators._base import (
    PrivateBinaryClassifier,
    check_privacy_parameters,
    delta_for,
    map_binary_labels,
    validate_private_data,
)
from oracledp.estimators._space_spec import (
    check_space,
    describe_space,
    parameter_space,
    space_label,
    with_space_note,
)
from oracledp.oracles._base import Oracle, check_work_limit
from oracledp.oracles._halfspace import FeatureSchema, HalfspaceProblem
from oracledp.oracles._registry import check_solver_name, make_oracle
from oracledp.oracles._row_blocks import CountedRows, RowBlocks
from oracledp.oracles._space import IntegerBall
from oracledp.privacy._accountant import begin_release

__all__ = ["ExactHalfspaceClassifier", "build_oracle", "public_schema", "round_to_grid"]

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

    Neither given (the estimators' default): a backend with a deterministic work limit
    (``highs``: the structured decomposition and the branch-and-bound) gets its default work
    (``work_limit="auto"``, about 1.5 minutes of a quiet 2-core machine) and no time limit, so
    whether a fit certifies does not depend on the machine or its load; any other backend
    gets :data:`DEFAULT_TIME_LIMIT` seconds.  ``time_limit`` alone: that time limit only (no
    work limit).  ``work_limit``: that work, and ``time_limit`` as well when given.  The
    brute-force oracle enumerates W and has neither limit; an
    :class:`~oracledp.oracles.Oracle` instance is used exactly as configured.
    """
    if not isinstance(oracle, str):
        return make_oracle(oracle)
    built = make_oracle(oracle)
    takes_time = _accepts_option(type(built), "time_limit")
    takes_work = _accepts_option(type(built), "work_limit")
    options: dict[str, Any] = {}
    if time_limit is None and work_limit is None:
        if takes_work:
            options["work_limit"] = "auto"
            if takes_time:
                options["time_limit"] = math.inf
        elif takes_time:
            options["time_limit"] = DEFAULT_TIME_LIMIT
    else:
        if time_limit is not None and takes_time:
            options["time_limit"] = time_limit
        elif takes_time:  # a work limit alone: no time limit
            options["time_limit"] = math.inf
        if work_limit is not None and takes_work:
            options["work_limit"] = work_limit
    return make_oracle(oracle, **options) if options else built


#: Seconds per oracle call for a backend without a deterministic work limit, when the caller
#: gives no limit (:func:`build_oracle`).
DEFAULT_TIME_LIMIT = 60.0


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


class ExactHalfspaceClassifier(PrivateBinaryClassifier):
    """Base of the exact classifiers (OPDisc, RSPM, Gaussian RSPM): the whole of ``fit``.

    A subclass declares its parameters in ``__init__`` and sets :attr:`_mechanism` (the
    learner: ``problem, epsilon[, delta], *, oracle, random_state, allow_uncertified,
    [calibration,] return_diagnostics``), :attr:`_space_model` (its rule for W),
    :attr:`_pure` and :meth:`_noise_attributes`.  The parameters a model does not take keep
    the class defaults below (a pure model has no ``delta`` and no ``calibration``; only
    OPDisc has ``tau``, ``bound`` and ``radius``), so one parameter check serves all.
    """

    # Defaults of the parameters that not every model takes (W a subset of {-1,0,1}^d, etc.).
    delta = None
    tau = 1.0
    bound = None
    radius = None
    calibration = "proven"

    #: The mechanism run once by ``fit`` (a learner of :mod:`oracledp.learners`).
    _mechanism: Callable[..., Any]
    #: Pure eps-DP (no delta and no calibration passed to the mechanism; delta 0 declared).
    _pure = False

    # ------------------------------------------------------------------------------------------
    @staticmethod
    def _transform(X: Any, grid: Fraction | None, schema: FeatureSchema) -> Any:
        """Round the non-binary columns to ``grid`` (if set); 0/1 columns stay as they are.
        :class:`RowBlocks` are rounded block by block."""
        if grid is None:
            return X
        if isinstance(X, RowBlocks):
            return X.map(lambda B: ExactHalfspaceClassifier._transform(B, grid, schema))
        numeric = ~schema.binary_mask
        out = X.copy()
        out[:, numeric] = round_to_grid(X[:, numeric], grid)
        return out

    def fit(self, X: ArrayLike, y: ArrayLike,
            sample_weight: ArrayLike | None = None) -> ExactHalfspaceClassifier:
        """Fit the private classifier (one run of its mechanism: OPDisc, RSPM or Gaussian RSPM).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or CountedRows
            Finite features (exact small rationals unless ``feature_grid`` is set).  A
            :class:`~oracledp.oracles._row_blocks.CountedRows` (e.g.
            :meth:`oracledp.tabular.AggregatedTable.counted_rows`, with ``y=None``) gives
            distinct rows read a block at a time with their record counts per label: the fit
            on the rows listed once per label with those counts, without the float matrix.
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
        X_arr: NDArray[np.float64] | RowBlocks
        if isinstance(X, CountedRows):  # rows read block by block: no float matrix
            X_arr, classes, n_pos, n_neg = self._counted_rows(X, y, sample_weight)
            del X
            n, d = int(n_pos.sum() + n_neg.sum()), X_arr.shape[1]
        else:
            X_arr, classes, y_pm, counts = self._counted_training_data(X, y, sample_weight)
            del X  # X_arr is the only reference fit keeps (often the same array)
            n, d = int(counts.sum()), X_arr.shape[1]
            n_pos = np.where(y_pm == 1, counts, 0)
            n_neg = np.where(y_pm == 1, 0, counts)
        # build takes the float matrix over: from_counts frees it once it is encoded (the
        # exact problem keeps small integers), unless the caller still holds it
        rows = [X_arr]
        del X_arr

        def build(space: IntegerBall, schema: FeatureSchema,
                  grid: Fraction | None) -> HalfspaceProblem:
            # the exact problem from the rows and their counts (equal rows are merged)
            return HalfspaceProblem.from_counts(self._transform(rows.pop(), grid, schema),
                                                n_pos, n_neg, space, schema=schema)

        return self._fit_problem(params, n, d, classes, build)

    def _counted_rows(self, data: CountedRows, y: object, sample_weight: object
                      ) -> tuple[RowBlocks, NDArray[Any], NDArray[np.int64], NDArray[np.int64]]:
        """``(rows, classes_, n_pos, n_neg)`` of a fit on :class:`CountedRows`: the checks
        and the label mapping of ``fit(X, y, sample_weight=c)`` on the table that lists each
        row once per label it carries (its labels are exactly the labels with a record)."""
        if y is not None or sample_weight is not None:
            raise TypeError(f"{type(self).__name__}.fit(CountedRows) takes no y and no "
                            "sample_weight: the rows carry their labels and counts")
        d = data.shape[1]
        if data.shape[0] == 0 or d == 0:
            raise ValueError("X is empty: need at least 1 sample and 1 feature")
        # the width as validate_data records it (n_features_in_), from the shape alone
        validate_private_data(self, np.zeros((1, d)), dtype=np.float64, ensure_all_finite=True)
        self._check_width(np.zeros((0, d)))
        counts = np.asarray(data.counts, dtype=np.int64)
        present = [j for j in range(len(data.labels)) if counts[:, j].any()]
        y_present = np.asarray([data.labels[j] for j in present], dtype=object)
        check_classification_targets(y_present)
        classes, y_pm = map_binary_labels(y_present, self.classes, type(self).__name__)
        n_pos = np.zeros(counts.shape[0], dtype=np.int64)
        n_neg = np.zeros(counts.shape[0], dtype=np.int64)
        for j, pm in zip(present, y_pm, strict=True):
            (n_pos if pm == 1 else n_neg)[:] += counts[:, j]
        return data.rows, classes, n_pos, n_neg

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
                     build: Any) -> ExactHalfspaceClassifier:
        """Steps 3-4 of fit: the exact problem (``build(space, schema, grid)``), one release."""
        # a pure model takes no delta (none is computed: 1/n^2 is 1 for one record)
        delta = 0.0 if self._pure else delta_for(self.delta, n)
        grid = params["grid"]

        # 3. The exact problem over the public schema (refuses data that violate it).
        space, how = self._make_space(d, params, n=n, delta=None if self._pure else delta)
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

    # --- what differs between the models ------------------------------------------------------
    def _declared_delta(self, delta: float) -> float:
        """The delta of the release (what a BudgetAccountant is declared): 0 for a pure model."""
        return 0.0 if self._pure else delta

    #: Which rule of :mod:`oracledp.estimators._space_spec` declares W (set by each model).
    _space_model: str

    def _make_space(self, d: int, params: dict[str, Any], *, n: int | None = None,
                    delta: float | None = None) -> tuple[IntegerBall, str]:
        """W (public: parameters, d, the schema's 0/1 columns and, for OPDisc's ``"auto"``, n
        records, epsilon and delta only) and how it was declared, for the guarantee."""
        bound, radius, tau = params["bound"], params["radius"], params["tau"]
        if bound is not None or radius is not None:  # the former explicit bounds
            return (IntegerBall(d, bound=bound, radius=radius, tau=tau),
                    f"bound={bound!r}, radius={radius!r}")
        # the columns not declared 0/1 (public: the schema; every column without one)
        n_numeric = (int((~np.asarray(self.schema.binary_mask, dtype=bool)).sum())
                     if isinstance(self.schema, FeatureSchema) else d)
        # OPDisc's noise rule reads n, epsilon and delta (auto_norm2 applies it at tau = 1 only)
        noise = {"n": n, "epsilon": params["epsilon"], "delta": delta, "tau": tau}
        return (parameter_space(params["space"], d, model=self._space_model, n_numeric=n_numeric,
                                **noise),
                space_label(params["space"], d, self._space_model, n_numeric, **noise))

    def _release(self, problem: HalfspaceProblem, epsilon: float, delta: float, oracle: Oracle,
                 rng: np.random.Generator, *, return_diagnostics: bool = False) -> Any:
        """One run of the model's mechanism (the only place noise is drawn)."""
        privacy: dict[str, Any] = {} if self._pure else {"calibration": self.calibration}
        return self._mechanism(problem, epsilon, *(() if self._pure else (delta,)),
                               oracle=oracle, random_state=rng,
                               allow_uncertified=bool(self.allow_uncertified),
                               return_diagnostics=return_diagnostics, **privacy)

    def _noise_attributes(self, result: Any) -> dict[str, Any]:
        """The fitted attributes that describe the mechanism's noise."""
        raise NotImplementedError

    def decision_function(self, X: ArrayLike) -> NDArray[np.float64]:
        """Scores ``<x, w>`` (after rounding to ``feature_grid`` if set), shape
        ``(n_samples,)``; > 0 means ``classes_[1]``.  Post-processing of the released w: no
        privacy cost.  A 0/1-loss halfspace has no probability model, so no ``predict_proba``."""
        X_arr = self._new_data(X)
        X_arr = self._transform(X_arr, self.feature_grid_, self.feature_schema_)  # as in fit
        return X_arr @ self.coef_[0]
