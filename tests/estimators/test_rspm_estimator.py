"""RSPMClassifier: scikit-learn compatibility and its privacy record."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from oracledp._errors import BoundsViolation
from oracledp.estimators import RSPMClassifier


@parametrize_with_checks([RSPMClassifier(epsilon=1.0, feature_grid=1e-3, random_state=0)])
def test_sklearn_compatible(estimator, check) -> None:
    check(estimator)


def test_fit_records_pure_guarantee_and_params() -> None:
    X = np.array([[0.0, 1.0], [1.0, 0.0], [1.0, 1.0], [0.5, 0.0]] * 5)
    y = np.array([0, 1, 1, 0] * 5)
    clf = RSPMClassifier(epsilon=2.0, oracle="brute", random_state=0, feature_grid=0.5).fit(X, y)
    assert clf.guarantee_.is_pure and clf.guarantee_.epsilon == 2.0
    assert clf.guarantee_.requires_exact_oracle and clf.m_ == 4 and clf.scale_ == 4.0
    assert set(np.unique(clf.coef_)) <= {-1.0, 0.0, 1.0}
    assert sorted(clf.get_params()) == ["allow_uncertified", "classes", "epsilon",
                                        "feature_grid", "keep_diagnostics", "oracle",
                                        "random_state", "schema", "space", "time_limit",
                                        "work_limit"]
    with pytest.raises(BoundsViolation):
        RSPMClassifier(oracle="brute", classes=[0, 1], feature_grid=0.5).fit(
            X, np.where(y == 0, 0, 5))
    with pytest.raises(ValueError, match="RSPMClassifier needs exactly 2 classes"):
        RSPMClassifier(oracle="brute", feature_grid=0.5).fit(X, np.zeros(len(X)))


def test_adult_accuracy() -> None:
    from oracledp.datasets import load_adult

    train, test = load_adult(), load_adult("test")
    clf = RSPMClassifier(epsilon=1.0, random_state=0, schema=train.feature_schema)
    clf.fit(train.X, train.y)
    assert clf.result_.certified and clf.guarantee_.holds
    assert clf.score(test.X, test.y) > 0.7


def test_a_pure_model_on_one_record_computes_no_delta():
    # Before: the default delta 1/n^2 was computed for RSPM too (pure, it takes none), and one
    # record gave "delta must be in the open interval (0, 1), got 1.0".
    X, y = np.array([[0.5, 1.0]]), np.array([1])
    clf = RSPMClassifier(epsilon=1.0, feature_grid=0.5, classes=[0, 1], random_state=0)
    clf.fit(X, y)
    assert clf.guarantee_.delta == 0.0 and clf.guarantee_.epsilon == 1.0
    assert clf.predict(X).shape == (1,)
