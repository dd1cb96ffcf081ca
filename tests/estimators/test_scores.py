"""Every classifier's scores: ``decision_function`` (scikit-learn's semantics: shape (n,),
positive means ``classes_[1]``), ``predict`` read from it (a score of 0 goes to
``classes_[0]``), and ``predict_proba`` for the logistic models only (OPSamp, Accuracy First,
DP-SGD), which is the sigmoid of the score computed by hand here."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from oracledp._registry import EXACT_MODELS, MODELS, make_estimator, model_schema
from oracledp.estimators import AccuracyFirstLogisticRegression
from oracledp.tabular import Column, TableSchema

SCHEMA = TableSchema(columns=(Column("x", "numeric", lower=0, upper=4, step=1),
                              Column("c", "categorical", levels=("a", "b"))),
                     target="y", labels=("no", "yes"))  # 4 features: x, c=a, c=b, intercept
DF = pd.DataFrame({"x": ["0", "1", "3", "4", "2", "3"] * 4,
                   "c": ["a", "a", "b", "b", "a", "a"] * 4,
                   "y": ["no", "no", "yes", "yes", "yes", "no"] * 4})
LOGISTIC = ("opsamp", "dpsgd", "accuracy-first")


def _fitted(model: str):
    """A small fit of ``model`` (brute-force oracle for the exact models), and its X."""
    schema = model_schema(model, SCHEMA)
    X, y = schema.encode(DF), schema.labels_of(DF)
    if model == "accuracy-first":  # a loose target that a table of 24 rows meets (at an
        # ex-post loss far above 10: a test of scores, not of a release's worth; no warning)
        est = AccuracyFirstLogisticRegression(1.0, classes=list(SCHEMA.labels), random_state=0,
                                              max_epsilon=1e9)
    else:
        est = make_estimator(model, schema, 1.0, random_state=0,
                             **({"oracle": "brute"} if model in EXACT_MODELS else {}))
    return est.fit(X, y), X


@pytest.fixture(scope="module", params=MODELS)
def fitted(request):
    return request.param, *_fitted(request.param)


def test_decision_function_is_the_linear_score_and_predict_follows_its_sign(fitted):
    _, est, X = fitted
    d = est.decision_function(X)
    assert d.shape == (X.shape[0],) and d.dtype == np.float64
    np.testing.assert_allclose(d, X @ est.coef_[0] + est.intercept_, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(est.predict(X), est.classes_[(d > 0).astype(int)])
    assert list(est.classes_) == ["no", "yes"]  # positive scores mean "yes"


def test_a_score_of_zero_predicts_the_first_class(fitted):
    _, est, X = fitted
    zero = X[:3] * 0.0  # scores <0, w> = 0 once the intercept (DP-SGD's own) is set aside
    intercept = est.intercept_
    try:
        est.intercept_ = 0.0
        assert (est.decision_function(zero) == 0.0).all()
        assert (est.predict(zero) == est.classes_[0]).all()
    finally:
        est.intercept_ = intercept


def test_predict_proba_only_for_the_logistic_models(fitted):
    model, est, X = fitted
    assert hasattr(est, "predict_proba") == (model in LOGISTIC)
    if model not in LOGISTIC:  # 0/1-loss halfspaces: scores without a probability model
        return
    proba = est.predict_proba(X)
    assert proba.shape == (X.shape[0], 2)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=0, atol=1e-15)
    by_hand = [1.0 / (1.0 + math.exp(-(sum(float(a) * float(w) for a, w in
                                            zip(row, est.coef_[0], strict=True))
                                        + float(est.intercept_))))
               for row in X]
    np.testing.assert_allclose(proba[:, 1], by_hand, rtol=1e-12)
    d = est.decision_function(X)
    assert (proba[d > 0, 1] >= 0.5).all() and (proba[d <= 0, 1] <= 0.5).all()
    clear = proba[:, 1] != 0.5
    np.testing.assert_array_equal(est.predict(X)[clear],
                                  est.classes_[(proba[clear, 1] > 0.5).astype(int)])
