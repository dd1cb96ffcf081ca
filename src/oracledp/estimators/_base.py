"""What every private estimator shares: the base classes and the checks of a fit.

* :class:`PrivateEstimator`: constructor arguments stored as given, the parameter checks
  that open every ``fit`` (:meth:`~PrivateEstimator._start_fit`: forget the previous fit,
  check every parameter, read no data, draw nothing), the fitted attributes stored in one
  step (:func:`result_attributes`: those that repeat the result's fields), new data
  validated as in fit, dense float tags, pickles without diagnostics or seed.
* :class:`PrivateBinaryClassifier`: the explicit label mapping (:func:`map_binary_labels`),
  ``decision_function`` and ``predict`` of a linear classifier;
  :class:`PrivateLogisticClassifier` adds the logistic ``predict_proba``.
* :func:`validate_private_data`: scikit-learn's validation whose refusals quote no record.
* :func:`check_privacy_parameters` / :func:`delta_for`: epsilon and delta of the
  fixed-budget estimators, with ``delta=None`` meaning ``1/n**2``.
* :func:`check_record_counts`: ``sample_weight`` read as record counts (whole numbers >= 0).

Every subclass's ``fit`` reports to the active :class:`~oracledp.privacy.BudgetAccountant`
(wrapped by :func:`~oracledp.privacy._accountant.accounted_fit` when the class is defined; the
fit declares its budget with :func:`~oracledp.privacy._accountant.begin_release` just before
its mechanism), and a clone made by scikit-learn's model selection warns that the fits add
up (:func:`~oracledp.privacy._accountant.note_clone`).
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import Tags
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import check_is_fitted, validate_data

from oracledp._diagnostics import (
    NonPrivateDiagnostics,
    PicklesWithoutDiagnostics,
    check_diagnostics_flag,
)
from oracledp._errors import BoundsViolation
from oracledp._validation import check_delta, check_epsilon, check_rng
from oracledp.privacy._accountant import accounted_fit, note_clone

#: What replaces a record value that a third-party message would have shown.
_HIDDEN = "<value not shown: it is data>"


def scrub_message(message: str) -> str:
    """A third-party (numpy, scikit-learn) error message without the record values it quotes.

    numpy says ``could not convert string to float: '<value>'``; scikit-learn appends
    ``array=<the data>`` to its shape errors and the whole array to ``Complex data not
    supported``.  Those parts are replaced by a placeholder; the rest (the rule) is kept.
    """
    text = str(message)
    if "could not convert" in text:
        head = text.split("could not convert", 1)[0]
        return (f"{head}could not convert a value to a number ({_HIDDEN}); the features (and "
                "a regressor's target) must be numeric: encode text columns first (e.g. "
                "oracledp.SchemaTransformer)")
    if text.startswith("Complex data not supported"):
        return f"Complex data not supported ({_HIDDEN})"
    if "array=" in text:
        head, rest = text.split("array=", 1)
        hint = rest[rest.index("Reshape"):] if "Reshape" in rest else ""
        return " ".join(f"{head.strip()} ({_HIDDEN}) {hint}".split())
    return text


def validate_private_data(estimator: Any, *args: Any, **kwargs: Any) -> Any:
    """scikit-learn's ``validate_data``, whose refusals never quote a record value.

    Same arguments and result; a ``ValueError``/``TypeError`` whose message would show
    data (see :func:`scrub_message`) is raised again, same type, with the values removed
    and without the original exception attached.
    """
    try:
        return validate_data(estimator, *args, **kwargs)
    except (TypeError, ValueError) as exc:
        clean = scrub_message(str(exc))
        if clean == str(exc):
            raise
        raise type(exc)(clean) from None


def refuse_missing_labels(y: Any, name: str) -> None:
    """Refuse a ``y`` of objects (texts, nullable types) with a missing label (None, NaN,
    pd.NA, NaT) naming that cause, before any other check of it (sklearn's raised a bare
    TypeError comparing None with a text, or "boolean value of NA is ambiguous")."""
    import pandas as pd

    try:
        arr = np.asarray(y)
        if arr.dtype.kind != "O" or arr.ndim != 1:  # numbers (a float NaN: sklearn's "Input
            return  # y contains NaN"), None or a table: sklearn's own messages
        missing = bool(pd.isna(arr).any())
    except (TypeError, ValueError):  # not an array of labels: the checks after say so
        return
    if missing:
        raise ValueError(f"{name}: y has missing labels (None or NaN; where is not shown: "
                         "that is data); remove those records, or map them to a label with "
                         "a public rule, first")


def map_binary_labels(y: NDArray[Any], declared: Any, name: str,
                      ) -> tuple[NDArray[Any], NDArray[np.int8]]:
    """The explicit label mapping of every binary estimator: (classes_, y in {-1, +1}).

    ``declared`` is the public label set (two labels; sorted, the first maps to -1),
    or None to read it from ``y`` (which treats the label set of the training data as
    public and refuses a y with one class).  Labels outside a declared set raise
    BoundsViolation; more than two classes, or one class without a declaration, ValueError.
    The messages state the rule and the declared (public) labels only: never a label read
    from ``y``, how many there are, or where they are (those are data).
    """
    if declared is not None:
        classes = np.asarray(declared)
        if classes.ndim != 1 or len(classes) != 2 or classes[0] == classes[1]:
            raise ValueError(f"classes must list exactly two distinct labels, got {declared!r}")
        classes = np.sort(classes)
        inside = np.isin(y, classes)
        if not inside.all():
            numbers = {np.asarray(y).dtype.kind in "biuf", classes.dtype.kind in "biuf"}
            hint = ("; y holds numbers and the classes are text, or the reverse (0 is not "
                    "'0'): with a TableSchema pass y = schema.labels_of(df), which reads the "
                    "labels by value" if numbers == {True, False} else "")
            raise BoundsViolation(
                f"y holds labels outside the declared classes {classes.tolist()} (the labels "
                f"are not shown: they are data); map or remove them with a public rule "
                f"first{hint}"
            )
        y_idx = np.searchsorted(classes, y)
    else:
        classes, y_idx = np.unique(y, return_inverse=True)
    if len(classes) > 2:
        y_type = type_of_target(y, input_name="y")
        raise ValueError(
            f"Only binary classification is supported. The type of the target is {y_type}: "
            f"y holds more than two classes (not shown: they are data). {name} learns one "
            "linear classifier; reduce y to two classes first (or pass classes=... to "
            "declare the two labels)."
        )
    if len(classes) < 2:
        raise ValueError(
            f"{name} needs exactly 2 classes in y, but y has 1 class (not shown: it is "
            "data); a classifier cannot be trained on one class (or pass classes=... to "
            "declare the label set)."
        )
    return classes, np.where(np.ravel(y_idx) == 1, 1, -1).astype(np.int8)


def forget_fit(est: Any) -> None:
    """Forget a previous fit, so a refused refit cannot leave a stale model behind."""
    for attr in [a for a in vars(est) if a.endswith("_") and not a.startswith("__")]:
        delattr(est, attr)


def result_attributes(result: Any, *fields: str) -> dict[str, Any]:
    """The fitted attributes that repeat fields of a mechanism's result, in the order given.

    Field ``name`` becomes the attribute ``name_`` (scikit-learn's trailing underscore); a
    field whose name already ends in ``_`` (``lambda_``) keeps it.  The values are the
    result's own objects, unconverted.
    """
    return {name if name.endswith("_") else f"{name}_": getattr(result, name) for name in fields}


def check_privacy_parameters(epsilon: object, delta: object) -> float:
    """``epsilon`` checked and returned; ``delta`` checked unless None (``1/n**2`` later)."""
    eps = check_epsilon(epsilon)
    if delta is not None:
        check_delta(delta)
    return eps


def delta_for(delta: object, n: int) -> float:
    """The delta of a fit on ``n`` records: ``delta`` (already checked by
    :func:`check_privacy_parameters`), or ``1/n**2`` for None (n treated as public), which is
    checked here: one record gives 1, not a valid delta."""
    return check_delta(1.0 / n**2) if delta is None else float(delta)  # type: ignore[arg-type]


#: The one refusal of counts that are not counts of records (no value is quoted: they are data).
RECORD_COUNTS_RULE = (
    "sample_weight must hold record counts: a whole number >= 0 per row of X (how many "
    "identical records that row stands for); a non-integer, negative or non-finite weight is "
    "refused (the weights are not shown: they are data)")

#: Counts above this are refused (int64 sums of them stay exact).
_MAX_COUNT = 2**53


def check_record_counts(sample_weight: object, n_rows: int) -> NDArray[np.int64]:
    """``sample_weight`` as record counts: int64, one per row, every one a whole number >= 0.

    A float array is accepted when every entry is a whole number (``np.ones(n)``); anything
    else that is not a count (a fraction, a negative or non-finite number, a boolean or
    text) raises ONE ValueError, :data:`RECORD_COUNTS_RULE`.  A shape other than
    ``(n_rows,)`` and counts that are all zero (no record at all) raise their own ValueError.
    No message quotes a weight or a count.
    """
    try:
        raw = np.asarray(sample_weight)
    except (TypeError, ValueError):
        raise ValueError(RECORD_COUNTS_RULE) from None
    if raw.ndim != 1 or raw.shape[0] != n_rows:
        raise ValueError("sample_weight must be a 1-D array with one record count per row of X")
    if raw.dtype.kind not in "iuf":
        raise ValueError(RECORD_COUNTS_RULE)
    if raw.dtype.kind == "f":
        with np.errstate(invalid="ignore"):
            whole = np.isfinite(raw) & (raw == np.rint(raw))
        if not whole.all():
            raise ValueError(RECORD_COUNTS_RULE)
    if (raw < 0).any() or (raw > _MAX_COUNT).any():
        raise ValueError(RECORD_COUNTS_RULE)
    counts = raw.astype(np.int64)
    if not counts.any():
        raise ValueError("sample_weight is all zero: the rows stand for no record, there is "
                         "nothing to fit")
    return counts


class PrivateEstimator(PicklesWithoutDiagnostics, BaseEstimator):
    """Base of the private estimators: the steps every ``fit`` shares.

    ``fit`` opens with :meth:`_start_fit` (all parameter checks, before any data or noise)
    and ends with :meth:`_set_fitted`.  An estimator is fitted once it has ``coef_``; it
    takes dense, finite float features; its pickle drops ``diagnostics_`` and, once fitted,
    the seed (:class:`~oracledp._diagnostics.PicklesWithoutDiagnostics`).
    """

    def __init_subclass__(cls, **kwargs: Any) -> None:
        fit = cls.__dict__.get("fit")
        if fit is not None and not getattr(fit, "__accounted__", False):
            cls.fit = accounted_fit(fit)  # type: ignore[method-assign]
        super().__init_subclass__(**kwargs)

    def __sklearn_clone__(self) -> Any:
        """scikit-learn's clone; inside its model selection, a PrivacyWarning (each fit of a
        clone is another release on the same records) or, with an active accountant, a mark
        that refuses a fit in another process."""
        clone = super().__sklearn_clone__()  # type: ignore[misc]
        note_clone(self, clone)
        return clone

    def __sklearn_tags__(self) -> Tags:
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = False
        tags.input_tags.allow_nan = False
        return tags

    def __sklearn_is_fitted__(self) -> bool:
        return hasattr(self, "coef_")

    def _check_params(self) -> dict[str, Any]:
        """The estimator's own parameter checks, in its order; the checked values by name."""
        raise NotImplementedError

    def _start_fit(self) -> dict[str, Any]:
        """Forget a previous fit and validate every parameter (no data, no randomness yet).

        The estimator's :meth:`_check_params`, then ``keep_diagnostics`` (``"keep"``) and
        ``random_state`` (``"rng"``, checked by type only: nothing is drawn here).
        """
        forget_fit(self)
        params = self._check_params()
        self._declared_n_features()  # the public width, checked with the parameters
        params["keep"] = check_diagnostics_flag(self.keep_diagnostics, "keep_diagnostics")
        params["rng"] = check_rng(self.random_state)  # type check only: nothing is drawn here
        return params

    def _declared_n_features(self) -> int | None:
        """The width of X that the public schema declares (None: any width): the
        ``n_features`` parameter, when the estimator has one."""
        n = getattr(self, "n_features", None)
        if n is None:
            return None
        if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 1:
            raise ValueError(f"n_features must be None or an integer >= 1, got {n!r}")
        return int(n)

    def _check_width(self, X: NDArray[np.float64]) -> None:
        """Refuse X whose number of columns is not the one the public schema declares (every
        classifier's fit, in one place; no value of X is read)."""
        expected = self._declared_n_features()
        if expected is not None and X.shape[1] != expected:
            raise ValueError(f"{type(self).__name__}: the schema declares {expected} columns "
                             f"but X has {X.shape[1]}; encode X with that schema (its "
                             f"{expected} encoded features, in order)")

    def _set_fitted(self, diagnostics: NonPrivateDiagnostics | None,
                    **fitted: Any) -> PrivateEstimator:
        """Store the fitted attributes in the order given, then ``diagnostics_`` if kept."""
        for name, value in fitted.items():
            setattr(self, name, value)
        if diagnostics is not None:
            self.diagnostics_ = diagnostics
        return self

    def _new_data(self, X: ArrayLike) -> NDArray[np.float64]:
        """X for the fitted model: validated as in fit (same columns), no value quoted."""
        check_is_fitted(self)
        return validate_private_data(
            self, X, dtype=np.float64, ensure_all_finite=True, reset=False)


class PrivateBinaryClassifier(ClassifierMixin, PrivateEstimator):
    """Base of the private linear classifiers: binary labels, scores ``<x, w>``.

    ``classes_[0]`` is mapped to -1 and ``classes_[1]`` to +1 (:func:`map_binary_labels`);
    a score > 0 predicts ``classes_[1]``.
    """

    def __sklearn_tags__(self) -> Tags:
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags

    def _training_data(self, X: ArrayLike, y: ArrayLike, *, check_targets: bool = True,
                       ) -> tuple[NDArray[np.float64], NDArray[Any], NDArray[np.int8]]:
        """``(X, classes_, y in {-1, +1})``: the data validated, the labels mapped."""
        refuse_missing_labels(y, type(self).__name__)
        X_arr, y_arr = validate_private_data(self, X, y, dtype=np.float64, ensure_all_finite=True)
        self._check_width(X_arr)
        if check_targets:
            check_classification_targets(y_arr)
        classes, y_pm = map_binary_labels(y_arr, self.classes, type(self).__name__)
        return X_arr, classes, y_pm

    def _counted_training_data(self, X: ArrayLike, y: ArrayLike, sample_weight: object,
                               ) -> tuple[NDArray[np.float64], NDArray[Any], NDArray[np.int8],
                                          NDArray[np.int64]]:
        """``(X, classes_, y in {-1, +1}, counts)`` for a fit on record counts.

        ``sample_weight`` None counts every row once; otherwise it is checked by
        :func:`check_record_counts` after X and y, and rows with count 0 (no record) are
        dropped before the labels are read, exactly as if they were absent.
        """
        refuse_missing_labels(y, type(self).__name__)
        X_arr, y_arr = validate_private_data(self, X, y, dtype=np.float64, ensure_all_finite=True)
        self._check_width(X_arr)
        if sample_weight is None:
            counts = np.ones(X_arr.shape[0], dtype=np.int64)
        else:
            counts = check_record_counts(sample_weight, X_arr.shape[0])
            if not counts.all():
                kept = counts > 0
                X_arr, y_arr, counts = X_arr[kept], y_arr[kept], counts[kept]
        check_classification_targets(y_arr)
        classes, y_pm = map_binary_labels(y_arr, self.classes, type(self).__name__)
        return X_arr, classes, y_pm, counts

    def decision_function(self, X: ArrayLike) -> NDArray[np.float64]:
        """Scores ``<x, w>``, shape ``(n_samples,)``; > 0 means ``classes_[1]``.

        Post-processing of the released coefficients: it reads no training record and costs
        no privacy (the fit's ``guarantee_`` covers every use of the model).
        """
        return self._new_data(X) @ self.coef_[0]

    def predict(self, X: ArrayLike) -> NDArray[Any]:
        """``classes_[1]`` where :meth:`decision_function` is > 0, else ``classes_[0]`` (a
        score of 0 included); post-processing, like the scores."""
        scores = self.decision_function(X)
        return self.classes_[(scores > 0).astype(np.intp)]


class PrivateLogisticClassifier(PrivateBinaryClassifier):
    """A private linear classifier of the logistic model: adds ``predict_proba``."""

    def predict_proba(self, X: ArrayLike) -> NDArray[np.float64]:
        """``[1 - sigmoid(score), sigmoid(score)]`` per row, columns in the order of ``classes_``.

        ``score`` is :meth:`decision_function`, so the second column is at least 1/2 where
        :meth:`predict` says ``classes_[1]`` and at most 1/2 elsewhere.  The logistic model's
        probabilities of the released coefficients: post-processing, no privacy cost (the
        fit's ``guarantee_`` covers them), and not calibrated against the noise the release
        added.
        """
        p = expit(self.decision_function(X))
        return np.column_stack([1.0 - p, p])
