"""AutoClassifier: the private selection among the exact learners and DP-SGD.

The accounting (exact numbers of docs/proofs/model-selection.md), determinism, the refusals
(before any noise for bad input; the whole selection for an uncertified oracle) and the one
ledger entry."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from oracledp._errors import BoundsViolation, BudgetError, OracleFailure
from oracledp._registry import make_estimator
from oracledp.estimators import AutoClassifier, OPDiscClassifier
from oracledp.estimators._auto import default_candidates, plan_trials, score_epsilon
from oracledp.oracles import FeatureSchema
from oracledp.privacy import BudgetAccountant, GuaranteeKind
from oracledp.tabular import TableSchema

SCHEMA = FeatureSchema.grid(3, 1, 1, binary=[0, 1, 2])
X = np.array([[1, 0, 1], [1, 1, 1], [0, 1, 1], [0, 0, 1]] * 10, dtype=float)
Y = np.array([1, 1, 0, 0] * 10)


def _auto(**kw):
    kw = {"candidates": ("rspm", "gaussian-rspm", "dpsgd"), "oracle": "brute",
          "schema": SCHEMA, "random_state": 0, **kw}
    return AutoClassifier(kw.pop("epsilon", 3.0), kw.pop("delta", 1e-4), **kw)


# --- the plan: exact numbers ------------------------------------------------------------------
def test_plan_splits_epsilon_equally_and_delta_among_the_approximate_candidates():
    trials = plan_trials(("opdisc", "rspm", "gaussian-rspm", "dpsgd"), 2.0, 3e-6, 1000)
    assert [t.model for t in trials] == ["opdisc", "rspm", "gaussian-rspm", "dpsgd"]
    assert [t.epsilon for t in trials] == [0.5] * 4
    # score: 25 / n = 0.025 is below a tenth of the trial, 0.05
    assert [t.epsilon_score for t in trials] == [0.05] * 4
    assert [t.epsilon_fit for t in trials] == [0.45] * 4
    assert [t.delta for t in trials] == [1e-6, 0.0, 1e-6, 1e-6]  # rspm is pure


def test_score_epsilon_rule_is_clipped_to_a_tenth_and_a_quarter_of_the_trial():
    assert score_epsilon(1.0, 200, None) == 0.125         # 25 / n
    assert score_epsilon(1.0, 100_000, None) == 0.1       # floor: a tenth of the trial
    assert score_epsilon(1.0, 50, None) == 0.25           # cap: a quarter of the trial
    assert score_epsilon(1.0, 50, 0.5) == 0.5             # share given


@pytest.mark.parametrize(("epsilon", "k"), [(0.3, 3), (1.0, 3), (0.7, 7), (2.0, 3), (1e-3, 3)])
def test_the_trials_never_sum_to_more_than_the_total(epsilon, k):
    names = ("opdisc", "rspm", "gaussian-rspm", "dpsgd", "opdisc@norm2=9", "opdisc@paper",
             "rspm@paper")[:k]
    trials = plan_trials(names, epsilon, 1e-6, 321)
    assert math.fsum(t.epsilon_fit for t in trials) + math.fsum(
        t.epsilon_score for t in trials) <= epsilon
    assert math.fsum(t.delta for t in trials) <= 1e-6
    assert all(t.epsilon_fit > 0 and t.epsilon_score > 0 for t in trials)
    assert math.isclose(math.fsum(t.epsilon for t in trials), epsilon, rel_tol=1e-12)


def test_default_candidates_are_the_advised_exact_model_and_dpsgd():
    assert default_candidates(9, 1.0) == ("gaussian-rspm", "dpsgd")  # rspm's W is the box
    assert default_candidates(25, 1.0, 15_590) == ("opdisc", "dpsgd")
    # 135 features: opdisc's default W has 2.1e8 points ("unlikely" at eps >= 1)
    assert default_candidates(135, 1.0, 4_075) == ("rspm", "dpsgd")
    # with the schema, W as the fit sizes it: 134 numeric columns lower opdisc's W to
    # ||k||^2 <= 2 (36,451 points), which certifies; d alone sizes the largest W
    from oracledp.tabular import TableSchema

    numeric = TableSchema.from_dict({
        "target": {"name": "y", "labels": ["no", "yes"]},
        "columns": [{"name": f"x{i}", "type": "numeric", "lower": 0, "upper": 9, "step": 1}
                    for i in range(134)]}).feature_schema()
    assert default_candidates(numeric, 1.0, 4_075) == ("opdisc", "dpsgd")


# --- the release ------------------------------------------------------------------------------
def test_guarantee_is_the_total_and_covers_every_trial():
    clf = _auto().fit(X, Y)
    g = clf.guarantee_
    assert (g.epsilon, g.delta, g.kind) == (3.0, 1e-4, GuaranteeKind.APPROXIMATE)
    assert g.requires_exact_oracle and g.holds
    assert "3 trials, one per candidate (fixed number, not random)" in g.calibration
    assert "docs/proofs/model-selection.md" in g.source
    assert [t.candidate for t in clf.trials_] == ["rspm", "gaussian-rspm", "dpsgd"]
    assert [t.delta for t in clf.trials_] == [0.0, 5e-5, 5e-5]
    assert clf.selected_ in ("rspm", "gaussian-rspm", "dpsgd")
    assert clf.noisy_scores_.shape == (3,)
    assert clf.selected_ == clf.trials_[int(np.argmax(clf.noisy_scores_))].candidate
    np.testing.assert_array_equal(clf.coef_, clf.best_estimator_.coef_)
    np.testing.assert_array_equal(clf.predict(X), clf.best_estimator_.predict(X))
    # the winner's own guarantee is one trial's fit: its share of the budget
    best = clf.trials_[int(np.argmax(clf.noisy_scores_))]
    assert clf.best_estimator_.guarantee_.epsilon == best.epsilon_fit


def test_pure_candidates_give_a_pure_guarantee_and_delta_none_is_one_over_n_squared():
    clf = _auto(candidates=("rspm",), delta=None, epsilon=1.0).fit(X, Y)
    assert clf.guarantee_.kind is GuaranteeKind.PURE and clf.guarantee_.epsilon == 1.0
    clf = _auto(candidates=("dpsgd",), delta=None, epsilon=1.0).fit(X, Y)
    assert clf.guarantee_.delta == 1.0 / len(Y) ** 2
    assert not clf.guarantee_.requires_exact_oracle  # no exact candidate ran


def test_same_random_state_same_release():
    a, b = _auto(random_state=7).fit(X, Y), _auto(random_state=7).fit(X, Y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    np.testing.assert_array_equal(a.noisy_scores_, b.noisy_scores_)
    assert a.selected_ == b.selected_ and a.guarantee_ == b.guarantee_
    c = _auto(random_state=8).fit(X, Y)
    assert not np.array_equal(a.noisy_scores_, c.noisy_scores_)


def test_record_counts_fit_the_same_as_repeated_rows():
    rows, counts = X[:4], np.full(4, 10)
    a = _auto(random_state=3).fit(np.repeat(rows, 10, axis=0), np.repeat(Y[:4], 10))
    b = _auto(random_state=3).fit(rows, Y[:4], sample_weight=counts)
    assert a.selected_ == b.selected_ and a.guarantee_ == b.guarantee_
    assert a.guarantee_.delta == 1.0e-4


# --- refusals ---------------------------------------------------------------------------------
@pytest.mark.parametrize(("kw", "err"), [
    ({"candidates": ("opdisc", "lasso")}, ValueError),
    ({"candidates": ("dpsgd", "dpsgd")}, ValueError),
    ({"candidates": ()}, ValueError),
    ({"candidates": "best"}, ValueError),
    ({"candidates": ("dpsgd@norm2=4",)}, ValueError),
    ({"candidates": ("opdisc@norm2=oops",)}, ValueError),
    ({"score_share": 1.0}, ValueError),
    ({"score_share": 0.0}, ValueError),
    ({"epsilon": -1.0}, ValueError),
    ({"keep_diagnostics": True}, ValueError),
    ({"schema": None}, TypeError),
    ({"oracle": "nope"}, ValueError),
])
def test_bad_parameters_are_refused_before_any_noise(kw, err):
    rng = np.random.default_rng(0)
    state = rng.bit_generator.state
    with pytest.raises(err):
        _auto(random_state=rng, **kw).fit(X, Y)
    assert rng.bit_generator.state == state


def test_data_outside_the_schema_is_refused_before_the_first_trial_draws():
    rng = np.random.default_rng(0)
    state = rng.bit_generator.state
    bad = X.copy()
    bad[0, 0] = 2.0  # a binary column holding 2
    # dpsgd runs first and would draw: the exact candidate's check must come before it
    with pytest.raises(BoundsViolation) as info:
        _auto(candidates=("dpsgd", "opdisc"), random_state=rng).fit(bad, Y)
    assert rng.bit_generator.state == state
    assert "2.0" not in str(info.value)


def test_labels_outside_the_declared_classes_are_refused_before_any_noise():
    rng = np.random.default_rng(0)
    state = rng.bit_generator.state
    with pytest.raises(BoundsViolation):
        _auto(classes=[0, 1], random_state=rng).fit(X, np.where(Y == 1, 1, 5))
    assert rng.bit_generator.state == state


def _failing_release(self, problem, epsilon, delta, oracle, rng, **kw):
    rng.standard_normal(3)  # the mechanism drew its noise, then the oracle gave up
    raise OracleFailure("did not certify")


def test_an_uncertified_trial_refuses_the_whole_selection_and_is_charged(monkeypatch):
    monkeypatch.setattr(OPDiscClassifier, "_release", _failing_release)
    clf = _auto(candidates=("dpsgd", "opdisc"), epsilon=2.0)
    with BudgetAccountant(5.0, 1e-3) as acct, pytest.raises(OracleFailure) as info:
        clf.fit(X, Y)
    assert "the whole selection stops and releases nothing" in str(info.value)
    assert not hasattr(clf, "coef_")
    (charge,) = acct.spends
    assert (charge.epsilon, charge.delta) == (2.0, 1e-4)  # the full declared budget
    assert "failed after its mechanism started" in charge.status


def test_one_ledger_entry_with_the_full_cost():
    with BudgetAccountant(4.0, 1e-3) as acct:
        _auto().fit(X, Y)
    (charge,) = acct.spends  # the trials' fits are covered, not charged again
    assert (charge.epsilon, charge.delta) == (3.0, 1e-4)
    assert charge.label.startswith("AutoClassifier.fit") and charge.status == "released"


def test_a_budget_too_small_is_refused_before_any_noise():
    rng = np.random.default_rng(0)
    state = rng.bit_generator.state
    with BudgetAccountant(2.0, 1e-3) as acct, pytest.raises(BudgetError):
        _auto(random_state=rng).fit(X, Y)
    assert acct.spends == () and rng.bit_generator.state == state


# --- the registry -----------------------------------------------------------------------------
TABLE = TableSchema.from_dict({
    "target": {"name": "y", "labels": ["no", "yes"]},
    "columns": [{"name": "x", "type": "numeric", "lower": 0, "upper": 4, "step": 1},
                {"name": "c", "type": "categorical", "levels": ["a", "b"]}]})
DF = pd.DataFrame({"x": [0, 1, 3, 4] * 10, "c": ["a", "a", "b", "b"] * 10,
                   "y": ["no", "no", "yes", "yes"] * 10})


def test_make_estimator_auto_on_a_table_schema():
    est = make_estimator("auto", TABLE, epsilon=3.0, delta=1e-4, oracle="brute",
                         random_state=0)
    assert isinstance(est, AutoClassifier) and est.candidates == "auto"
    est.fit(TABLE.encode(DF), TABLE.labels_of(DF))
    assert [t.candidate for t in est.trials_] == ["gaussian-rspm", "dpsgd"]
    assert est.classes_.tolist() == ["no", "yes"]
    assert (est.guarantee_.epsilon, est.guarantee_.delta) == (3.0, 1e-4)


@pytest.mark.parametrize("kw", [{"space": "paper"}, {"alpha": 0.1}, {"max_epsilon": 2.0}])
def test_make_estimator_auto_refuses_what_it_does_not_take(kw):
    with pytest.raises(ValueError, match="auto does not take"):
        make_estimator("auto", TABLE, epsilon=1.0, **kw)
