"""Models by name: the registry that ``oracledp fit`` and Python users share.

:func:`make_estimator` builds the estimator of a model name for a table described by a
:class:`~oracledp.tabular.TableSchema`, with the schema's public bounds and labels;
:func:`model_schema` is the schema the model's rows must be encoded with (Accuracy First's
proofs need ``||x||_1 <= 1``: the schema's rows are divided by their public l1 bound, a
public constant, never a clip).  The command line calls exactly these two functions, so a
table that fits on the command line fits the same way in Python::

    schema = model_schema("accuracy-first", schema)
    est = make_estimator("accuracy-first", schema, alpha=0.1, random_state=0)
    est.fit(schema.encode(df), schema.labels_of(df))
"""

from __future__ import annotations

from typing import Any

__all__ = ["MODELS", "estimator_class", "make_estimator", "model_schema"]

#: Every single model :func:`make_estimator` knows (``oracledp models`` explains them).
MODELS = ("opdisc", "rspm", "opsamp", "dpsgd", "accuracy-first", "gaussian-rspm")
#: The private selection among opdisc, rspm, gaussian-rspm and dpsgd
#: (:class:`~oracledp.estimators.AutoClassifier`): a name :func:`make_estimator` also takes.
AUTO = "auto"

#: The estimator class of each name (module, class), imported only when asked for.
_CLASSES: dict[str, tuple[str, str]] = {
    "opdisc": ("oracledp.estimators", "OPDiscClassifier"),
    "rspm": ("oracledp.estimators", "RSPMClassifier"),
    "gaussian-rspm": ("oracledp.estimators", "GaussianRSPMClassifier"),
    "opsamp": ("oracledp.estimators", "OPSampClassifier"),
    "dpsgd": ("oracledp.baselines", "DPSGDLogisticRegression"),
    "accuracy-first": ("oracledp.estimators", "AccuracyFirstLogisticRegression"),
    AUTO: ("oracledp.estimators", "AutoClassifier"),
}


def estimator_class(name: str) -> Any:
    """The estimator class :func:`make_estimator` builds for model ``name`` (its
    ``_get_param_names()`` are the parameters a saved model may record)."""
    import importlib

    module, cls = _CLASSES[check_model_name(name)]
    return getattr(importlib.import_module(module), cls)


def check_model_name(name: object, param: str = "name") -> str:
    """``name`` if it is one of :data:`MODELS` or ``"auto"``; ValueError naming ``param``
    otherwise."""
    if not isinstance(name, str) or name not in (*MODELS, AUTO):
        raise ValueError(f"{param} must be one of {', '.join((*MODELS, AUTO))}, got {name!r}")
    return name


def model_schema(name: str, schema: Any) -> Any:
    """The schema to encode rows with for model ``name``.

    For ``"accuracy-first"`` a schema whose rows may exceed ``||x||_1 = 1`` is replaced by
    :meth:`~oracledp.tabular.TableSchema.scaled_to_l1` (rows divided by the public l1 bound);
    every other model uses the schema as it is.

    Examples
    --------
    >>> from oracledp._registry import make_estimator, model_schema
    >>> from oracledp.tabular import TableSchema
    >>> schema = TableSchema.from_dict({
    ...     "target": {"name": "y", "labels": ["no", "yes"]},
    ...     "columns": [{"name": "x", "type": "numeric", "lower": 0, "upper": 4, "step": 1},
    ...                 {"name": "c", "type": "categorical", "levels": ["a", "b"]}]})
    >>> schema.norm_bounds()["l1"]  # x in [0, 1], one level of c, the intercept feature
    3.0
    >>> scaled = model_schema("accuracy-first", schema)
    >>> scaled.row_divisor, scaled.norm_bounds()["l1"]  # rows divided by 3, a public constant
    (3, 1.0)
    >>> model_schema("opdisc", schema) is schema
    True
    >>> make_estimator("accuracy-first", scaled, alpha=0.1, random_state=0)
    ... # doctest: +NORMALIZE_WHITESPACE
    AccuracyFirstLogisticRegression(alpha=0.1, classes=['no', 'yes'], n_features=4,
                                    random_state=0)
    """
    if check_model_name(name) == "accuracy-first" and schema.norm_bounds()["l1"] > 1:
        return schema.scaled_to_l1()  # public divisor: every row has ||x||_1 <= 1
    return schema


#: Marks a keyword the caller did not pass (so a parameter the model does not take is refused).
_UNSET: Any = object()
#: The models with an exact oracle (their own ``oracle``/``time_limit``/``work_limit``/``space``).
EXACT_MODELS = ("opdisc", "rspm", "gaussian-rspm")


def _refuse_foreign(name: str, epsilon: Any, delta: Any, given: dict[str, Any]) -> None:
    """ValueError if a parameter was passed that model ``name`` does not take."""
    takes = {"accuracy-first": {"alpha", "max_epsilon"},
             AUTO: {"oracle", "time_limit", "work_limit", "candidates", "score_share"}}.get(
        name, {"oracle", "time_limit", "work_limit", "space"} if name in EXACT_MODELS else set())
    foreign = sorted(k for k, v in given.items() if v is not _UNSET and k not in takes)
    if name == "accuracy-first":
        foreign = [*(["epsilon"] if epsilon is not None else []),
                   *(["delta"] if delta is not None else []), *foreign]
    elif name == "rspm" and delta is not None:
        foreign = ["delta", *foreign]
    if foreign:
        raise ValueError(f"{name} does not take {', '.join(f'{k}=' for k in foreign)}"
                         " (see oracledp models)")


def make_estimator(name: str, schema: Any, epsilon: float | None = None,
                   delta: float | None = None, *, alpha: float = _UNSET,
                   random_state: Any = None, oracle: str = _UNSET,
                   time_limit: float | None = _UNSET, max_epsilon: float | None = _UNSET,
                   space: Any = _UNSET, work_limit: int | None = _UNSET,
                   candidates: Any = _UNSET, score_share: float | None = _UNSET) -> Any:
    """The unfitted estimator of model ``name`` for a table with public schema ``schema``.

    ``epsilon`` / ``delta`` are the privacy parameters of the fixed-budget models
    (``opdisc``, ``rspm``, ``gaussian-rspm``, ``opsamp``, ``dpsgd``); ``alpha`` (the target
    excess risk) and ``max_epsilon`` those of ``accuracy-first``; ``oracle`` (a backend name,
    the command line's ``--solver``) and ``time_limit`` / ``work_limit`` choose the exact
    oracle of ``opdisc`` / ``rspm`` / ``gaussian-rspm``, and ``space`` (the command line's
    ``--space``; not given or None: the estimator's default ``"auto"``, a rule on d, the
    schema's encoded features: ``||k||^2 <= min(d, 4)`` for opdisc, for rspm and gaussian-rspm
    the box {-1,0,1}^d while d <= 12) their parameter space W.  ``"auto"`` is the private
    selection :class:`~oracledp.estimators.AutoClassifier` at the TOTAL ``epsilon`` /
    ``delta``: it takes ``candidates`` (``"auto"`` or names such as ``"opdisc@norm2=9"``),
    ``score_share`` and the exact candidates' ``oracle`` / ``time_limit`` / ``work_limit``
    (``docs/proofs/model-selection.md``).  A parameter the model does not
    take is refused, not ignored: ``alpha`` / ``max_epsilon`` except for accuracy-first (which
    takes no ``epsilon`` or ``delta``: it chooses its epsilon ex post), ``oracle`` /
    ``time_limit`` / ``work_limit`` / ``space`` except for the three exact-oracle models, and
    ``delta`` for rspm (pure epsilon-DP).  Not given, ``alpha`` is 0.1, ``oracle`` "highs"
    and the oracle's limit its default deterministic work (no time limit; 60 seconds for a
    backend without a work limit: :func:`~oracledp.estimators._exact.build_oracle`).  Labels
    and bounds come
    from the schema (public), and so does the number of features: every model's ``fit``
    refuses an X of another width (encoded by another schema) before any noise.  Pass
    ``model_schema(name, schema)`` for ``accuracy-first``.
    Each estimator's docstring states its guarantee; the fitted estimator carries it as
    ``guarantee_``.

    A schema that still has entries read from the data (``"from_data": true``) or
    unresolved columns is refused here
    (:meth:`~oracledp.tabular.TableSchema.check_confirmed`).  Nothing else is checked:
    the estimator's ``fit`` validates every parameter, before reading the data.  For
    ``opdisc``, ``rspm``, ``gaussian-rspm`` or ``dpsgd`` on a large CSV, fit the distinct rows
    with their record counts:
    ``est.fit(*read_aggregated(path, schema).weighted_rows())``.

    Examples
    --------
    >>> import pandas as pd
    >>> from oracledp._registry import make_estimator
    >>> from oracledp.tabular import TableSchema
    >>> schema = TableSchema.from_dict({
    ...     "target": {"name": "y", "labels": ["no", "yes"]},
    ...     "columns": [{"name": "x", "type": "numeric", "lower": 0, "upper": 4, "step": 1},
    ...                 {"name": "c", "type": "categorical", "levels": ["a", "b"]}]})
    >>> df = pd.DataFrame({"x": [0, 1, 3, 4], "c": ["a", "a", "b", "b"],
    ...                    "y": ["no", "no", "yes", "yes"]})
    >>> est = make_estimator("rspm", schema, epsilon=1.0, oracle="brute", random_state=0)
    >>> est.fit(schema.encode(df), schema.labels_of(df)).guarantee_.describe().split("; ")[0]
    '1-DP (pure), replace-one neighbours'
    >>> est.classes_.tolist(), est.feature_schema_.names  # the schema's labels and columns
    (['no', 'yes'], ('x', 'c=a', 'c=b', '(intercept)'))
    """
    check_model_name(name)
    _refuse_foreign(name, epsilon, delta, {
        "alpha": alpha, "max_epsilon": max_epsilon, "oracle": oracle, "time_limit": time_limit,
        "work_limit": work_limit, "space": _UNSET if space is None else space,
        "candidates": candidates, "score_share": score_share})
    schema.check_confirmed()  # the schema's one confirmation check, for Python and the CLI
    schema.require_target(f"the model {name!r}")
    labels = list(schema.labels)
    if name == AUTO:
        return estimator_class(AUTO)(
            epsilon, delta, schema=schema.feature_schema(), classes=labels,
            random_state=random_state, fit_intercept=not schema.intercept,
            n_features=schema.n_features,
            candidates="auto" if candidates is _UNSET else candidates,
            score_share=None if score_share is _UNSET else score_share,
            oracle="highs" if oracle is _UNSET else oracle,
            time_limit=None if time_limit is _UNSET else time_limit,
            work_limit=None if work_limit is _UNSET else work_limit)
    if name in EXACT_MODELS:
        common = {"schema": schema.feature_schema(), "classes": labels,
                  "random_state": random_state,
                  "oracle": "highs" if oracle is _UNSET else oracle,
                  "time_limit": None if time_limit is _UNSET else time_limit,
                  "work_limit": None if work_limit is _UNSET else work_limit,
                  **({} if space is _UNSET or space is None else {"space": space})}
        if name == "rspm":  # pure: no delta
            return estimator_class(name)(epsilon, **common)
        return estimator_class(name)(epsilon, delta, **common)
    if name == "opsamp":
        nb = schema.norm_bounds()
        return estimator_class(name)(epsilon, delta, feature_bound=nb["linf"],
                                feature_l1_bound=nb["l1"], classes=labels,
                                n_features=schema.n_features, random_state=random_state)
    if name == "dpsgd":
        # the schema's intercept feature plays the intercept's role: no second constant
        return estimator_class(name)(epsilon, delta, classes=labels, random_state=random_state,
                                       fit_intercept=not schema.intercept,
                                       n_features=schema.n_features)
    return estimator_class(name)(0.1 if alpha is _UNSET else alpha, classes=labels,
                                           random_state=random_state,
                                           max_epsilon=None if max_epsilon is _UNSET
                                           else max_epsilon,
                                           n_features=schema.n_features)
