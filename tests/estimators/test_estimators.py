"""OPDiscClassifier: scikit-learn conventions, label mapping, validation order, privacy metadata."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.utils.estimator_checks import parametrize_with_checks

from oracledp._errors import DiagnosticsWarning, OracleFailure, PrivacyWarning
from oracledp.estimators import AccuracyFirstLogisticRegression, OPDiscClassifier, RSPMClassifier
from oracledp.estimators._opdisc import build_oracle, round_to_grid
from oracledp.estimators._space_spec import parameter_space
from oracledp.learners._opdisc import opdisc_sigma
from oracledp.oracles import FeatureSchema, HalfspaceProblem, IntegerBall, OracleStatus
from oracledp.oracles._base import make_result
from oracledp.oracles._brute import BruteForceOracle
from oracledp.privacy._guarantees import GuaranteeKind

# --- scikit-learn's estimator checks -----------------------------------------------------------

# At epsilon = 1 every check passes (the checks' data are small, but their classes are far apart).
# fit takes record counts as sample_weight, so the sample-weight checks run too (integer weights
# are exactly repeated rows, zero weights removed rows); with the
# multi_class=False tag the multiclass checks are replaced by
# check_classifier_not_supporting_multiclass (which passes).  The strongly private instance shows
# the one check that contradicts DP; xfail_strict = true makes sure it really fails.
_STRONG_DP_EPS = 0.01
_CHECKED = [
    OPDiscClassifier(epsilon=1.0, feature_grid=1e-3, random_state=0, oracle="highs"),
    OPDiscClassifier(
        epsilon=_STRONG_DP_EPS, feature_grid=1e-3, random_state=0, oracle="highs"
    ),
]


def _expected_failed_checks(estimator: OPDiscClassifier) -> dict[str, str]:
    if estimator.epsilon <= _STRONG_DP_EPS:
        return {
            "check_classifiers_train": (
                "DP noise: at epsilon=0.01 the objective noise (sigma ~ 2.2e3 for 200 points, "
                "d=2) outweighs the 0/1 loss, so the required training accuracy > 0.83 on "
                "make_blobs is not attainable by design"
            ),
        }
    return {}


@parametrize_with_checks(_CHECKED, expected_failed_checks=_expected_failed_checks)
def test_sklearn_compatible(estimator, check):
    check(estimator)


# --- tiny exact problems (brute-force oracle) ---------------------------------------------------


def _separable(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Integer points in [-3, 3]^2 off the line x1 + x2 = 0, labelled by sign(x1 + x2)."""
    g = np.array([(a, b) for a in range(-3, 4) for b in range(-3, 4) if a + b != 0], dtype=float)
    y = np.where(g.sum(axis=1) > 0, 1, -1)
    perm = np.random.default_rng(seed).permutation(len(g))
    return g[perm], y[perm]


def _brute(**kw) -> OPDiscClassifier:
    return OPDiscClassifier(**{"oracle": "brute", "feature_grid": 0.5, **kw})


class _ZeroNoise(OPDiscClassifier):
    """Test double: the oracle sees eta = 0, i.e. the non-private optimum.  For tests of the
    estimator's plumbing (labels, rounding, feature names); no eps in OPDisc's proven range
    (eps <= ln(1/delta)) makes the noise negligible on tiny data."""

    def _release(self, problem, epsilon, delta, oracle, rng, *, return_diagnostics=False):
        from oracledp.learners._opdisc import opdisc

        return opdisc(problem, epsilon, delta, oracle=oracle, eta=np.zeros(problem.d + 1),
                      return_diagnostics=return_diagnostics)


def _exact(**kw) -> OPDiscClassifier:
    # W declared: "auto" would follow the (here unused) noise of eps 1 on ~40 records down to
    # ||k||^2 <= 1, where w = (1, 1) is not a point
    return _ZeroNoise(**{"oracle": "brute", "feature_grid": 0.5, "space": "norm2=2", **kw})


def test_zero_noise_gives_the_nonprivate_optimum():
    X, y = _separable()
    with pytest.warns(DiagnosticsWarning):
        clf = _exact(random_state=0, keep_diagnostics=True).fit(X, y)
    problem = HalfspaceProblem.from_data(X, y, IntegerBall(2))
    best = BruteForceOracle().solve(problem, np.zeros(3))
    assert best.loss == 0  # w = (1, 1) separates the data
    assert clf.diagnostics_["oracle"].loss == best.loss
    assert clf.score(X, y) == 1.0
    assert clf.result_.certified is True
    assert clf.diagnostics_["oracle_status"]["certified"] is True


def test_accuracy_above_chance_at_moderate_epsilon():
    X, y = _separable()
    X = np.vstack([X] * 4)
    y = np.concatenate([y] * 4)
    accs = [_brute(epsilon=5.0, random_state=s).fit(X, y).score(X, y) for s in range(5)]
    assert np.mean(accs) > 0.75


@pytest.mark.parametrize(
    ("labels", "expected"),
    [((-1, 1), [-1, 1]), ((0, 1), [0, 1]), (("neg", "pos"), ["neg", "pos"]),
     ((2.0, 7.0), [2.0, 7.0])],
)
def test_explicit_label_mapping(labels, expected):
    X, y_pm = _separable()
    y = np.where(y_pm > 0, labels[1], labels[0])
    ref = _brute(epsilon=2.0, random_state=3).fit(X, y_pm)
    clf = _brute(epsilon=2.0, random_state=3).fit(X, y)
    assert list(clf.classes_) == expected
    np.testing.assert_array_equal(clf.coef_, ref.coef_)  # classes_[0] -> -1, classes_[1] -> +1
    pred = clf.predict(X)
    assert set(pred.tolist()) <= set(expected)
    np.testing.assert_array_equal(pred == expected[1], ref.predict(X) == 1)


def test_label_order_is_sorted_not_first_seen():
    X, y_pm = _separable()
    y = np.where(y_pm > 0, "a", "b")  # "a" is the +1 side of the data, but sorts first
    clf = _exact(random_state=0).fit(X, y)
    assert list(clf.classes_) == ["a", "b"]
    assert clf.score(X, y) == 1.0  # the learned halfspace points to "b" = +1


def test_zero_score_goes_to_negative_class():
    X, y = _separable()
    clf = _exact(random_state=0).fit(X, np.where(y > 0, "pos", "neg"))
    w = clf.coef_[0]
    on_plane = np.array([[w[1], -w[0]]])  # <x, w> = 0
    assert clf.decision_function(on_plane)[0] == 0.0
    assert clf.predict(on_plane)[0] == "neg"


@pytest.mark.parametrize(
    ("y", "match"),
    [(np.ones(42), "exactly 2 classes.*1 class"),
     (np.arange(42) % 3, "Only binary classification is supported.*more than two classes")],
)
def test_wrong_number_of_classes_rejected_before_noise(y, match):
    X, _ = _separable()
    rng = np.random.default_rng(1)
    state = rng.bit_generator.state
    with pytest.raises(ValueError, match=match):
        _brute(random_state=rng).fit(X, y)
    assert rng.bit_generator.state == state


@pytest.mark.parametrize(
    ("params", "error"),
    [({"epsilon": 0.0}, ValueError), ({"epsilon": -1.0}, ValueError),
     ({"epsilon": math.nan}, ValueError), ({"epsilon": "1"}, TypeError),
     ({"delta": 0.0}, ValueError), ({"delta": 1.0}, ValueError), ({"tau": 0.0}, ValueError),
     ({"bound": -1.0}, ValueError), ({"radius": math.inf}, ValueError),
     ({"bound": 0.5}, ValueError),  # W = {0}
     ({"time_limit": 0}, ValueError), ({"oracle": "nope"}, ValueError),
     ({"work_limit": 0}, ValueError), ({"work_limit": 2.5}, TypeError),
     ({"oracle": 3}, TypeError), ({"allow_uncertified": "yes"}, TypeError),
     ({"feature_grid": -1e-3}, ValueError), ({"feature_grid": math.pi / 1000}, ValueError)],
)
def test_bad_parameters_rejected_before_noise(params, error):
    X, y = _separable()
    rng = np.random.default_rng(2)
    state = rng.bit_generator.state
    clf = OPDiscClassifier(**{"oracle": "brute", "random_state": rng, "feature_grid": 0.5,
                              **params})
    with pytest.raises(error):
        clf.fit(X, y)
    assert rng.bit_generator.state == state
    assert not hasattr(clf, "coef_")


def test_bad_data_rejected_before_noise():
    X, y = _separable()
    rng = np.random.default_rng(3)
    state = rng.bit_generator.state
    Xn = X.copy()
    Xn[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        _brute(random_state=rng).fit(Xn, y)
    off_grid = {"feature_grid": None, "schema": FeatureSchema.grid(2, 0.5, 4.0)}
    with pytest.raises(ValueError, match="declared public grid"):  # not on the declared grid
        _brute(random_state=rng, **off_grid).fit(X + math.pi / 1e4, y)
    with pytest.raises(ValueError, match="public description of the features"):
        _brute(random_state=rng, feature_grid=None).fit(X, y)
    with pytest.raises(ValueError):
        _brute(random_state=rng).fit(np.empty((0, 2)), [])
    with pytest.raises(ValueError, match="Unknown label type"):
        _brute(random_state=rng).fit(X, np.linspace(0, 1, len(y)))
    assert rng.bit_generator.state == state


def test_feature_grid_rounds_in_fit_and_predict():
    X, y = _separable()
    Xj = X + np.random.default_rng(0).uniform(-0.04, 0.04, X.shape)  # irrational-ish jitter
    clf = _exact(random_state=0, feature_grid=0.1).fit(Xj, y)
    assert clf.feature_grid_ == Fraction(1, 10)
    Xg = round_to_grid(Xj, clf.feature_grid_)
    np.testing.assert_allclose(Xg, np.round(Xj, 1), atol=1e-12)
    np.testing.assert_array_equal(clf.decision_function(Xj), Xg @ clf.coef_[0])
    clf.set_params(feature_grid=0.5)  # predict keeps the grid of the fit
    np.testing.assert_array_equal(clf.decision_function(Xj), Xg @ clf.coef_[0])
    ref = _exact(random_state=0).fit(Xg, y)  # grid data used directly
    np.testing.assert_array_equal(clf.coef_, ref.coef_)


def test_reproducible_by_seed_and_generator_consumed():
    X, y = _separable()
    fit = lambda rs: _brute(epsilon=0.5, random_state=rs).fit(X, y).coef_  # noqa: E731
    np.testing.assert_array_equal(fit(7), fit(7))
    assert len({tuple(fit(s)[0]) for s in range(8)}) > 1
    gen = np.random.default_rng(11)
    assert len({tuple(fit(gen)[0]) for _ in range(8)}) > 1  # shared Generator: new noise each fit
    # clone deep-copies a Generator: the clones draw identical noise.
    base = _brute(epsilon=0.5, random_state=np.random.default_rng(5))
    a, b = clone(base).fit(X, y), clone(base).fit(X, y)
    assert a.sigma_ == b.sigma_
    np.testing.assert_array_equal(a.coef_, b.coef_)


def test_guarantee_and_fitted_attributes():
    X, y = _separable()
    n = len(y)
    clf = _brute(epsilon=2.0, random_state=0).fit(X, y)
    g = clf.guarantee_
    assert g.epsilon == 2.0
    assert g.delta == pytest.approx(1.0 / n**2)
    assert g.kind is GuaranteeKind.APPROXIMATE
    assert g.requires_exact_oracle is True
    assert g.holds is True
    # the W "auto" declares for d = 2, n records, eps 2 and delta 1/n^2 (public facts only)
    problem = HalfspaceProblem.from_data(
        X, y, parameter_space("auto", 2, n=n, epsilon=2.0, delta=1.0 / n**2))
    assert clf.space_ == problem.space
    assert clf.sigma_ == pytest.approx(opdisc_sigma(2.0, 1.0 / n**2, problem))
    assert clf.calibration_.method == "proven" and clf.calibration_.delta_bound <= g.delta
    assert "docs/proofs/opdisc-calibration.md" in g.source and "m =" in g.calibration
    assert clf.coef_.shape == (1, 2)
    assert clf.intercept_ == 0.0
    assert clf.n_features_in_ == 2
    assert not hasattr(clf, "feature_names_in_")
    assert not hasattr(clf, "oracle_status_") and not hasattr(clf, "diagnostics_")
    assert clf.result_.diagnostics is None and g.diagnostics_released is False
    assert _brute(epsilon=2.0, delta=1e-3, random_state=0).fit(X, y).guarantee_.delta == 1e-3


def test_dataframe_feature_names():
    X, y = _separable()
    df = pd.DataFrame(X, columns=["f0", "f1"])
    clf = _exact(random_state=0).fit(df, y)
    assert list(clf.feature_names_in_) == ["f0", "f1"]
    assert clf.score(df, y) == 1.0


def test_failed_refit_leaves_no_stale_model():
    X, y = _separable()
    clf = _brute(random_state=0).fit(X, y)
    clf.set_params(epsilon=-1.0)
    with pytest.raises(ValueError):
        clf.fit(X, y)
    assert not hasattr(clf, "coef_")


class _UncertifiedOracle:
    """A fake oracle that stops 'at the time limit' with a positive gap."""

    name = "fake"

    def solve(self, problem, eta):
        k = np.array([1, 1])
        obj = float(problem.objective_k(k, eta)[0])
        return make_result(problem, eta, k, obj - 3.0, OracleStatus.TIME_LIMIT, 0.0, self.name)


def test_uncertified_oracle_refused_by_default():
    X, y = _separable()
    clf = OPDiscClassifier(oracle=_UncertifiedOracle(), random_state=0, feature_grid=0.5)
    with pytest.raises(OracleFailure, match="certified"):
        clf.fit(X, y)
    assert not hasattr(clf, "coef_")


def test_allow_uncertified_releases_with_guarantee_not_holding():
    X, y = _separable()
    clf = OPDiscClassifier(oracle=_UncertifiedOracle(), random_state=0, allow_uncertified=True,
                           feature_grid=0.5, space="norm2=2")  # the fake's answer (1, 1) in W
    with pytest.warns(PrivacyWarning, match="NO differential privacy guarantee"):
        clf.fit(X, y)
    np.testing.assert_array_equal(clf.coef_, [[1.0, 1.0]])
    assert clf.guarantee_.holds is False and clf.result_.certified is False
    assert not hasattr(clf, "diagnostics_")
    clf.set_params(keep_diagnostics=True)
    with pytest.warns(PrivacyWarning):  # NO guarantee, and non-private diagnostics kept
        clf.fit(X, y)
    assert clf.diagnostics_["oracle_status"]["certified"] is False
    assert clf.diagnostics_["oracle_status"]["status"] == "time_limit"


def test_time_limit_only_given_to_solvers_that_take_it():
    assert isinstance(build_oracle("brute", 5.0), BruteForceOracle)
    oracle = build_oracle("highs", 7.0)
    assert oracle._options["time_limit"] == 7.0
    fake = _UncertifiedOracle()
    assert build_oracle(fake, 5.0) is fake
    assert isinstance(build_oracle("brute", 5.0, 100), BruteForceOracle)  # takes neither
    oracle = build_oracle("highs", 7.0, 100)
    assert oracle._options["time_limit"] == 7.0 and oracle.work_limit == 100
    assert oracle._structured.work_limit == 100 and oracle._branch.work_limit == 100


def test_work_limit_changes_nothing_when_it_is_not_reached():
    X, y = _separable()
    a = OPDiscClassifier(epsilon=0.5, random_state=4, oracle="highs", feature_grid=0.5,
                         work_limit=10**6).fit(X, y)
    b = OPDiscClassifier(epsilon=0.5, random_state=4, oracle="highs",
                         feature_grid=0.5).fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)


def test_highs_matches_brute_force():
    """The default (deterministic work) limit: the release does not depend on the machine's
    load, so no wall-clock bound is asserted here."""
    X, y = _separable()
    a = OPDiscClassifier(epsilon=0.5, random_state=4, oracle="highs",
                         feature_grid=0.5).fit(X, y)
    b = _brute(epsilon=0.5, random_state=4).fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)


def test_declared_classes_make_the_label_mapping_public() -> None:
    """With classes= the mapping does not depend on y: one-class y is accepted, labels outside
    the declared set are refused (BoundsViolation), and the mapping is the sorted declared order."""
    from oracledp._errors import BoundsViolation

    X = np.array([[0.0, 1.0], [1.0, 0.0], [1.0, 1.0], [0.5, 0.5]])
    clf = OPDiscClassifier(epsilon=1.0, oracle="brute", classes=["no", "yes"], random_state=0,
                           feature_grid=0.5)
    clf.fit(X, np.array(["yes"] * 4))
    assert clf.classes_.tolist() == ["no", "yes"]
    assert set(clf.predict(X)) <= {"no", "yes"}
    with pytest.raises(BoundsViolation, match="outside the declared classes"):
        OPDiscClassifier(oracle="brute", classes=[0, 1], feature_grid=0.5).fit(
            X, np.array([0, 1, 2, 1]))
    with pytest.raises(ValueError, match="exactly two distinct"):
        OPDiscClassifier(oracle="brute", classes=[1, 1], feature_grid=0.5).fit(
            X, np.array([1, 1, 1, 1]))


@pytest.mark.parametrize("y", [np.array(["a", "b", None, "a"] * 5, dtype=object),
                               np.array(["a", "b", np.nan, "a"] * 5, dtype=object),
                               pd.Series(["a", "b", None, "a"] * 5, dtype="string"),
                               pd.array([1, 2, None, 1] * 5, dtype="Int64")],
                         ids=["None", "nan-object", "string-NA", "Int64-NA (NaN: sklearn's)"])
def test_a_missing_label_is_refused_naming_the_cause(y):
    """sklearn's sort raised a bare TypeError ('<' between None and str) or pandas' "boolean
    value of NA is ambiguous"; every estimator now says what is wrong, before any noise."""
    from oracledp.baselines import DPSGDLogisticRegression

    X = np.random.default_rng(0).uniform(0, 0.5, (20, 2))
    for est in (DPSGDLogisticRegression(epsilon=1.0), RSPMClassifier(epsilon=1.0,
                oracle="brute", feature_grid=0.5), AccuracyFirstLogisticRegression(alpha=0.1)):
        with pytest.raises(ValueError, match=r"y has missing labels|Input y contains NaN"):
            est.fit(X, y)


def test_accuracy_first_warns_above_the_command_lines_cap_when_no_cap_was_given():
    """The Python estimator has no default cap (the command line's is 10): a release above
    10 with no max_epsilon gets a PrivacyWarning naming max_epsilon; one below it, or any
    release under an explicit cap, none."""
    import warnings

    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (4000, 3)) / 3  # ||x||_1 <= 1
    y = np.where(rng.random(4000) < 1 / (1 + np.exp(-4 * X[:, 0])), "p", "n")
    with pytest.warns(PrivacyWarning, match=r"ex-post loss of 13\.\d+, above 10.*max_epsilon="):
        AccuracyFirstLogisticRegression(alpha=0.1, random_state=0).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyWarning)
        est = AccuracyFirstLogisticRegression(alpha=0.2, random_state=0).fit(X, y)
        assert est.guarantee_.epsilon < 10
        with pytest.raises(ValueError, match="max_epsilon"):  # a cap: refused, never above
            AccuracyFirstLogisticRegression(alpha=0.1, max_epsilon=5, random_state=0).fit(X, y)
