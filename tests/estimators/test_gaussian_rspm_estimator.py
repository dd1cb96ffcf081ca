"""GaussianRSPMClassifier: scikit-learn compatibility and its privacy record."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from oracledp._errors import PrivacyWarning
from oracledp.estimators import GaussianRSPMClassifier


@parametrize_with_checks([GaussianRSPMClassifier(epsilon=1.0, delta=1e-5, feature_grid=1e-3,
                                                 random_state=0)])
def test_sklearn_compatible(estimator, check) -> None:
    check(estimator)


def test_estimator_records_approximate_guarantee_and_params() -> None:
    X = np.array([[0.0, 1.0], [1.0, 0.0], [1.0, 1.0], [0.5, 0.0]] * 5)
    y = np.array([0, 1, 1, 0] * 5)
    clf = GaussianRSPMClassifier(epsilon=2.0, oracle="brute", random_state=0,
                                 feature_grid=0.5).fit(X, y)
    g = clf.guarantee_
    assert not g.is_pure and g.delta == 1.0 / 20**2 and g.epsilon == 2.0  # delta = 1/n^2
    assert g.requires_exact_oracle and g.holds and clf.m_ == 4
    assert clf.sigma_ == clf.calibration_.sigma == clf.result_.sigma
    assert set(np.unique(clf.coef_)) <= {-1.0, 0.0, 1.0}
    assert sorted(clf.get_params()) == ["allow_uncertified", "calibration", "classes", "delta",
                                        "epsilon", "feature_grid", "keep_diagnostics", "oracle",
                                        "random_state", "schema", "space", "time_limit", "work_limit"]
    with pytest.raises(ValueError, match="calibration must"):
        GaussianRSPMClassifier(oracle="brute", feature_grid=0.5, calibration="x").fit(X, y)
    with pytest.raises(ValueError, match="delta"):
        GaussianRSPMClassifier(oracle="brute", feature_grid=0.5, delta=2.0).fit(X, y)
    with pytest.warns(PrivacyWarning):
        paper = GaussianRSPMClassifier(oracle="brute", feature_grid=0.5, delta=1e-3,
                                       calibration="paper", random_state=0).fit(X, y)
    assert paper.guarantee_.holds is False


@pytest.mark.slow
def test_adult_accuracy() -> None:
    from oracledp.datasets import load_adult

    train, test = load_adult(), load_adult("test")
    clf = GaussianRSPMClassifier(epsilon=1.0, random_state=0, schema=train.feature_schema)
    clf.fit(train.X, train.y)
    assert clf.result_.certified and clf.guarantee_.holds and clf.m_ == 46
    assert clf.sigma_ == pytest.approx(117.71, abs=0.01)
    assert clf.score(test.X, test.y) > 0.7
