"""The parameter space W of OPDisc and RSPM as a declared public parameter (``space=``).

* the "auto" rule is a function of d and the model only (||k||^2 <= min(d, 4)), equal to the
  paper's W for d <= 4, and the same W whatever the data;
* every spelling of ``space`` is checked before any randomness, with one ValueError/TypeError;
* the guarantee (notes), ``space_`` and ``space_description_`` record W, |W| (exact, checked
  by enumeration) and D;
* OPDisc's sigma, computed from public parameters, is smaller for the compact W;
* RSPM over a norm-bounded subset of {-1, 0, 1}^d and OPDisc over the compact W return the
  exact argmin: the default oracle equals brute force and an explicit enumeration.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from oracledp import advise_model
from oracledp._registry import make_estimator
from oracledp.estimators import OPDiscClassifier, RSPMClassifier
from oracledp.estimators import _exact as _exact_estimator
from oracledp.estimators._space_spec import (
    AUTO_GROW_MAX,
    AUTO_GROW_NOISE,
    AUTO_SHRINK_NOISE,
    _searched_over_w,
    auto_norm2,
    check_space,
    describe_space,
    noise_share,
    parameter_space,
    records_space,
    space_spec,
)
from oracledp.learners import opdisc, rspm
from oracledp.learners._opdisc_calibration import calibrate
from oracledp.learners._rspm import rspm_space, separator_patterns
from oracledp.oracles import HalfspaceProblem
from oracledp.oracles._halfspace import Perturbation
from oracledp.tabular import TableSchema


def _kset(space) -> set[tuple[int, ...]]:
    return {tuple(k) for k in space.enumerate_k()}


# --- the rule ------------------------------------------------------------------------------


@pytest.mark.parametrize("d", [1, 2, 3, 4, 5, 7, 12, 13, 40])
def test_auto_rule_is_a_function_of_d_and_the_model(d):
    """OPDisc: ||k||^2 <= min(d, 4); RSPM: the box while 3^d <= 10^6 (d <= 12), else 4."""
    assert auto_norm2(d) == min(d, 4)
    assert auto_norm2(d, "rspm") == (d if d <= 12 else 4)
    w = parameter_space("auto", d)
    assert (w.k_max, w.k_norm2_max, w.max_k_norm2) == (math.isqrt(min(d, 4)), min(d, 4),
                                                       min(d, 4))
    r = parameter_space("auto", d, model="rspm")
    assert (r.k_max, r.k_norm2_max) == (1, d if d <= 12 else 4)
    if d <= 4:  # the rule changes nothing on the narrowest tables
        assert _kset(w) == _kset(parameter_space("paper", d))
    elif d <= 7:  # a strict subset otherwise
        assert _kset(w) < _kset(parameter_space("paper", d))
    if d <= 7:
        assert _kset(r) == _kset(rspm_space(d))  # RSPM keeps the box while it is small
    if d >= 13:
        assert r.size() == sum(math.comb(d, j) * 2**j for j in range(5)) < 3**d


def test_rspm_box_threshold_is_the_size_of_the_box():
    assert 3**12 <= 10**6 < 3**13
    assert [auto_norm2(d, "rspm") for d in (12, 13)] == [12, 4]


# Two tables with the same public d = 6 and n = 40 that differ in everything else the rule must
# not read: the range of the values (largest |x| 1/2 against 3) and the share of positive labels.
_DATA_RANGE_TABLES = ((1, 0.2), (6, 0.8))  # (largest |value| in grid steps of 1/2, P[y = 1])
_N, _EPS = 40, 1.0


def _fitted_spaces(cls: type) -> list[tuple[object, str]]:
    rng = np.random.default_rng(0)
    spaces = []
    for steps, p in _DATA_RANGE_TABLES:
        X = rng.integers(-steps, steps + 1, size=(_N, 6)) / 2
        X[0, 0] = steps / 2  # the range is reached
        y = np.where(rng.random(_N) < p, 1, -1)
        clf = cls(_EPS, oracle="brute", feature_grid=0.5, random_state=1,
                  classes=[-1, 1]).fit(X, y)
        spaces.append((clf.space_, clf.space_description_))
    return spaces


def _w_reads_only_public_facts(cls: type, model: str) -> bool:
    """The W of every table is the same, and it is the rule's W for d = 6 (and, for OPDisc, n,
    epsilon and the default delta 1/n^2)."""
    spaces = _fitted_spaces(cls)
    return all(s == spaces[0] for s in spaces) and spaces[0][0] == parameter_space(
        "auto", 6, model=model, n=_N, epsilon=_EPS, delta=_N**-2.0)


@pytest.mark.parametrize("cls, model", [(OPDiscClassifier, "opdisc"), (RSPMClassifier, "rspm")])
def test_the_fitted_w_is_the_same_whatever_the_data(cls, model):
    """The rule reads d, the model and (OPDisc) n, epsilon and delta only: not the values'
    range, not the labels."""
    assert _w_reads_only_public_facts(cls, model)


@pytest.mark.parametrize("reads", ["the largest |x|", "the positive labels"])
def test_a_w_rule_that_reads_the_data_is_caught(monkeypatch, reads):
    """Planted mutants of the rule, ||k||^2 <= 4 max |x_ij|^2 (the rule's 4 on data in
    [-1, 1], so a version of the test whose two tables both had max |x_ij| = 1 passed against
    it) or ||k||^2 <= (positive records) / 5 (rounded up, between 1 and d): the test above
    must fail on each."""
    seen: dict[str, float] = {}
    counted = OPDiscClassifier._counted_training_data

    def reading(self, X, y, sample_weight):
        X_arr, classes, y_pm, counts = counted(self, X, y, sample_weight)
        seen["the largest |x|"] = 4 * float(np.abs(X_arr).max()) ** 2
        seen["the positive labels"] = float(counts[y_pm == 1].sum()) / 5
        return X_arr, classes, y_pm, counts

    def rule(space, d, *, model="opdisc", tau=1.0, n_numeric=None, **public):
        norm2 = min(d, max(1, math.ceil(seen[reads])))
        return parameter_space(f"norm2={norm2}", d, model=model, tau=tau)

    monkeypatch.setattr(_exact_estimator.ExactHalfspaceClassifier, "_counted_training_data",
                        reading)  # the one base of OPDisc, RSPM and Gaussian RSPM
    monkeypatch.setattr(_exact_estimator, "parameter_space", rule)
    assert not _w_reads_only_public_facts(OPDiscClassifier, "opdisc")
    assert not _w_reads_only_public_facts(RSPMClassifier, "rspm")


# --- the noise rule (OPDisc with n, epsilon and delta) ----------------------------------------


@pytest.mark.parametrize("d", [3, 23])
def test_the_noise_rule_follows_sigma_over_n(d):
    """For every (n, epsilon) of a grid: R is 1, or the share of W's sigma in n is at most
    AUTO_SHRINK_NOISE; R above min(d, 4) only with a share at most AUTO_GROW_NOISE; R + 1 would
    break the rule that applied (growth) or R is the cap; and R never falls as n or epsilon
    grow."""
    grid_n = (50, 1_000, 50_000, 500_000)  # each cell calibrates sigma a few times (0.1 s)
    grid_e = (0.05, 1.0, 8.0)
    base = min(d, 4)
    table = {}
    for n in grid_n:
        for e in grid_e:
            r = auto_norm2(d, n=n, epsilon=e, delta=n**-2.0)
            table[n, e] = r
            share = noise_share(d, r, n, e, n**-2.0)
            assert 1 <= r <= max(base, min(d, AUTO_GROW_MAX))
            assert r == 1 or share <= AUTO_SHRINK_NOISE
            if r > base:
                assert share <= AUTO_GROW_NOISE
            if base <= r < min(d, AUTO_GROW_MAX):
                assert noise_share(d, r + 1, n, e, n**-2.0) > AUTO_GROW_NOISE
            if r < base:
                assert noise_share(d, r + 1, n, e, n**-2.0) > AUTO_SHRINK_NOISE
    for i, n in enumerate(grid_n):
        for j, e in enumerate(grid_e):
            if i:
                assert table[n, e] >= table[grid_n[i - 1], e]
            if j:
                assert table[n, e] >= table[n, grid_e[j - 1]]
    assert table[50, 0.05] == 1  # a tiny budget: the constant classifiers and single features
    assert table[500_000, 8.0] == min(d, AUTO_GROW_MAX)


def test_the_noise_rule_does_not_grow_past_the_structured_decomposition():
    """With many numeric columns a larger W would be searched point by point: no growth.  10-12
    numeric columns keep R = 4 (decomposed) but would not be decomposed at R = 5."""
    n = 10**7
    for n_numeric in range(1, 16):
        r = auto_norm2(40, n_numeric=n_numeric, n=n, epsilon=4.0, delta=n**-2.0)
        base = auto_norm2(40, n_numeric=n_numeric)
        assert r >= base and (r == base or not _searched_over_w(n_numeric, r))
    assert auto_norm2(40, n_numeric=3, n=n, epsilon=4.0, delta=n**-2.0) == AUTO_GROW_MAX
    assert auto_norm2(40, n_numeric=11, n=n, epsilon=4.0, delta=n**-2.0) == 4  # guard
    assert auto_norm2(40, n_numeric=40, n=n, epsilon=4.0, delta=n**-2.0) == 3  # lowered


def test_the_fit_passes_its_own_delta_and_tau_to_the_rule():
    """An explicit delta reaches the rule (a larger delta, a smaller sigma, a larger W); with
    tau != 1 the noise rule is not applied (its shares are for tau = 1) and the fit works."""
    rng = np.random.default_rng(5)
    X = rng.integers(0, 2, size=(60, 6)).astype(float)
    y = np.where(rng.random(60) < 0.5, 1, -1)
    fits = {delta: OPDiscClassifier(3.0, delta, oracle="brute", feature_grid=1.0,
                                    random_state=0, classes=[-1, 1]).fit(X, y)
            for delta in (None, 1e-2)}
    for delta, clf in fits.items():
        assert clf.space_ == parameter_space("auto", 6, n=60, epsilon=3.0,
                                             delta=60**-2.0 if delta is None else delta)
    assert fits[1e-2].space_.k_norm2_max > fits[None].space_.k_norm2_max
    for tau in (0.5, 2.0):
        clf = OPDiscClassifier(3.0, tau=tau, oracle="brute", feature_grid=1.0, random_state=0,
                               classes=[-1, 1]).fit(X, y)
        assert clf.space_ == parameter_space("auto", 6, tau=tau)
        assert "proven sigma" not in clf.guarantee_.notes  # the label says no move either


def test_the_advice_sizes_opdiscs_w_with_n_and_epsilon():
    """``oracledp models`` (advise_model) reports the W ``fit --model opdisc`` declares."""
    from oracledp._guidance import _default_spaces

    for eps, want in ((0.1, 1), (1.0, 4)):
        w, _ = _default_spaces(9, None, 921, eps)
        assert w.k_norm2_max == want == auto_norm2(9, n=921, epsilon=eps, delta=921**-2.0)


def test_the_advice_sizes_w_at_the_fits_own_delta():
    """advise_model(..., delta=) gives the W a fit with that delta declares (the fit of
    test_the_fit_passes_its_own_delta_and_tau_to_the_rule: a larger delta, a larger W)."""
    rng = np.random.default_rng(5)
    X = rng.integers(0, 2, size=(60, 6)).astype(float)
    y = np.where(rng.random(60) < 0.5, 1, -1)
    for delta in (None, 1e-2):
        clf = OPDiscClassifier(3.0, delta, oracle="brute", feature_grid=1.0, random_state=0,
                               classes=[-1, 1]).fit(X, y)
        advice = advise_model(6, 3.0, n=60, delta=delta)
        assert dict(advice.space_sizes)["opdisc"] == clf.space_.size()
        assert advice.delta == (60**-2.0 if delta is None else delta)
    assert (dict(advise_model(6, 3.0, n=60, delta=1e-2).space_sizes)["opdisc"]
            > dict(advise_model(6, 3.0, n=60).space_sizes)["opdisc"])
    with pytest.raises(ValueError, match="delta needs n"):
        advise_model(6, 3.0, delta=1e-2)
    for bad in (0.0, 1.0, math.nan):
        with pytest.raises(ValueError, match="delta"):
            advise_model(6, 3.0, n=60, delta=bad)


def test_the_noise_rule_is_opdiscs_only():
    n = 50
    assert auto_norm2(9, "rspm", n=n, epsilon=0.05, delta=n**-2.0) == 9  # RSPM: the box
    assert auto_norm2(9, n=n, epsilon=0.05, delta=n**-2.0) == 1
    assert auto_norm2(9, n=n, epsilon=0.05) == 4  # without delta: the rule on d alone


def test_a_shrunk_w_is_declared_in_the_guarantee():
    """A fit at a tiny budget declares the lowered W, and says why, in its guarantee."""
    rng = np.random.default_rng(3)
    X = rng.integers(0, 2, size=(30, 5)).astype(float)
    y = np.where(rng.random(30) < 0.5, 1, -1)
    clf = OPDiscClassifier(0.05, oracle="brute", feature_grid=1.0, random_state=0,
                           classes=[-1, 1]).fit(X, y)
    assert clf.space_.k_norm2_max == 1
    assert "lowered to 1: OPDisc's proven sigma over n records" in clf.guarantee_.notes
    assert records_space(clf.guarantee_.notes, clf.space_)


@pytest.mark.parametrize(("spec", "want"), [
    ("auto", ("auto", None, None)), (" paper ", ("paper", None, None)),
    ("norm2=9", ("norm2", 9.0, None)), ("norm2 = 4, bound=2", ("norm2", 4.0, 2.0)),
    ({"norm2": 6}, ("norm2", 6.0, None)), ({"norm2": 6, "bound": 1}, ("norm2", 6.0, 1.0)),
])
def test_space_spellings(spec, want):
    assert tuple(check_space(spec)) == want


@pytest.mark.parametrize("spec", ["", "Auto", "norm2", "norm2=", "norm2=x", "bound=2",
                                  "norm2=4,norm2=5", "norm2=4;bound=2", "norm2=-1",
                                  "norm2=nan", "norm2=inf", {"radius": 3}, {"bound": 2},
                                  {"norm2": 0}])
def test_bad_spaces_raise_value_error(spec):
    with pytest.raises(ValueError, match="space must be"):
        check_space(spec)


@pytest.mark.parametrize("spec", [None, 4, ["norm2", 4], {"norm2": True}, {"norm2": [4]}])
def test_bad_space_types_raise_type_error(spec):
    with pytest.raises(TypeError, match="space must be"):
        check_space(spec)


def test_rspm_space_is_a_subset_of_the_box():
    with pytest.raises(ValueError, match="bound can only be 1"):
        check_space("norm2=4,bound=2", "rspm")
    assert parameter_space("norm2=9,bound=1", 5, model="rspm") == parameter_space(
        "norm2=9", 5, model="rspm")
    with pytest.raises(ValueError, match="tau = 1"):
        parameter_space("auto", 5, model="rspm", tau=0.5)


@pytest.mark.parametrize("spec", ["auto", "paper", "norm2=9", "norm2=5,bound=1", "norm2=2.5"])
def test_the_saved_spec_gives_w_back(spec):
    for d in (3, 6):
        w = parameter_space(spec, d)
        back = parameter_space(space_spec(w), d)
        assert _kset(back) == _kset(w) and back.max_k_norm2 == w.max_k_norm2


# --- validation before randomness ------------------------------------------------------------


@pytest.mark.parametrize("cls", [OPDiscClassifier, RSPMClassifier])
@pytest.mark.parametrize("space", ["nope", "norm2=0", {"norm2": 2, "tau": 1}, 3])
def test_a_bad_space_is_refused_before_any_randomness(cls, space):
    rng = np.random.default_rng(5)
    state = rng.bit_generator.state
    X = np.array([[0.5, 1.0], [1.0, 0.0], [0.0, 0.5], [1.0, 1.0]])
    with pytest.raises((ValueError, TypeError), match="space"):
        cls(space=space, oracle="brute", feature_grid=0.5, random_state=rng).fit(X, [0, 1, 0, 1])
    assert rng.bit_generator.state == state


def test_explicit_bounds_keep_working_and_exclude_space():
    X = np.array([[0.5, 1.0], [1.0, 0.0], [0.0, 0.5], [1.0, 1.0]] * 3)
    y = [0, 1, 0, 1] * 3
    clf = OPDiscClassifier(bound=1, radius=1.0, oracle="brute", feature_grid=0.5,
                           random_state=0).fit(X, y)
    assert (clf.space_.k_max, clf.space_.k_norm2_max) == (1, 1)
    assert "bound=1.0, radius=1.0" in clf.space_description_
    with pytest.raises(ValueError, match="either space= or bound=/radius="):
        OPDiscClassifier(space="paper", bound=1, oracle="brute", feature_grid=0.5).fit(X, y)


def test_make_estimator_passes_space_and_refuses_it_elsewhere():
    schema = TableSchema.from_dict({
        "target": {"name": "y", "labels": ["no", "yes"]},
        "columns": [{"name": "x", "type": "numeric", "lower": 0, "upper": 4, "step": 1}]})
    assert make_estimator("opdisc", schema, 1.0).space == "auto"
    assert make_estimator("rspm", schema, 1.0, space="norm2=1").space == "norm2=1"
    for model in ("dpsgd", "opsamp", "accuracy-first"):
        with pytest.raises(ValueError, match=f"{model} does not take .*space="):
            make_estimator(model, schema, 1.0, 1e-6, space="paper")


# --- what the fit records --------------------------------------------------------------------


@pytest.mark.parametrize(("cls", "model"), [(OPDiscClassifier, "opdisc"),
                                            (RSPMClassifier, "rspm")])
def test_guarantee_and_attributes_record_w_size_and_d(cls, model):
    rng = np.random.default_rng(2)
    X = rng.integers(-2, 3, size=(40, 6)) / 2
    y = np.where(X[:, 0] + X[:, 1] > 0, 1, 0)
    for spec in ("auto", "paper", "norm2=2"):
        if model == "rspm" and spec == "auto":
            continue  # at d = 6 RSPM's auto is the box, "paper"
        # epsilon 10: OPDisc's noise rule keeps min(d, 4) for 40 records (share 0.21)
        clf = cls(10.0, space=spec, oracle="brute", feature_grid=0.5, random_state=0).fit(X, y)
        w = parameter_space(spec, 6, model=model)
        assert clf.space_ == w
        size = len(w.enumerate_k())  # |W| by enumeration
        d2 = int((w.enumerate_k() ** 2).sum(axis=1).max())  # D^2 by enumeration
        label = {"auto": "space='auto': ||k||^2 <= min(d, 4), d = 6",
                 "paper": "space='paper': the ICML 2020 experiment's W",
                 "norm2=2": "space='norm2=2'"}[spec]
        assert clf.space_description_ == describe_space(w, label)
        assert f"|W| = {size:,}" in clf.space_description_
        assert f"D = max ||w||_2 = {math.sqrt(d2):.6g}" in clf.space_description_
        assert f"||k||^2 <= {w.k_norm2_max}" in clf.space_description_
        assert clf.guarantee_.notes.endswith(clf.space_description_)
        assert clf.guarantee_.holds and clf.result_.guarantee.notes in clf.guarantee_.notes
        k = np.rint(clf.coef_[0]).astype(np.int64)  # the release is a point of W
        assert w.contains_k(k)[0]
        if model == "opdisc":
            assert clf.calibration_.size == size


def test_opdisc_sigma_is_smaller_for_the_compact_w():
    """sigma = m 4 G D^2 / (tau eps) from public parameters: D^2 = 4 instead of d."""
    for d in (6, 12, 23):
        delta = 1e-8
        auto = calibrate(1.0, delta, parameter_space("auto", d), 1.0)
        paper = calibrate(1.0, delta, parameter_space("paper", d), 1.0)
        assert auto.c == 16.0 and paper.c == pytest.approx(4.0 * d)
        assert auto.sigma < paper.sigma * 4.0 / d * 1.0001  # |W| smaller too: m no larger
    X = np.array([[0.5, 1.0, 0.0, 0.5, 1.0, 0.0], [1.0, 0.0, 0.5, 0.0, 0.5, 1.0]] * 10)
    fits = {s: OPDiscClassifier(1.0, 1e-6, space=s, oracle="brute", feature_grid=0.5,
                                random_state=0).fit(X, [0, 1] * 10) for s in ("auto", "paper")}
    for s, clf in fits.items():
        # 20 records at epsilon 1: the noise rule lowers "auto" (to ||k||^2 <= 1)
        want = calibrate(1.0, 1e-6, parameter_space(s, 6, n=20, epsilon=1.0, delta=1e-6), 1.0)
        assert clf.sigma_ == want.sigma
    assert fits["auto"].sigma_ < 0.7 * fits["paper"].sigma_  # D^2: 4 against 6


# --- exactness on norm-bounded spaces --------------------------------------------------------


def _random_problem(rng, d, space):
    n = int(rng.integers(8, 60))
    num = rng.integers(-2, 4, size=(n, 2)) / 3
    cat = np.eye(d - 2)[rng.integers(0, d - 2, size=n)]
    X = np.hstack([num, cat])
    y = np.where(rng.random(n) < 0.5, 1, -1)
    return X, y, HalfspaceProblem.from_data(X, y, space)


@pytest.mark.parametrize("norm2", [1, 2, 3])
def test_rspm_on_a_norm_bounded_box_is_the_exact_argmin(norm2):
    rng = np.random.default_rng(10 + norm2)
    space = rspm_space(5, norm2=norm2)
    K = space.enumerate_k()
    assert (np.abs(K).max() <= 1) and ((K**2).sum(axis=1) <= norm2).all()
    assert len(K) == sum(math.comb(5, j) * 2**j for j in range(norm2 + 1))
    for trial in range(12):
        X, y, problem = _random_problem(rng, 5, space)
        eta = rng.laplace(0, rng.choice([0.3, 3.0, 20.0]), size=10)
        # the exact argmin by enumeration: data errors + the separator weights' losses
        scores = K @ X.T
        errors = (np.sign(scores) != y[None, :]).sum(axis=1)
        objective = errors + separator_patterns(K) @ eta
        want = K[int(np.argmin(objective))]
        assert np.sort(objective)[1] - objective.min() > 1e-9  # a unique minimizer
        for oracle in ("brute", "highs"):
            res = rspm(problem, 1.0, oracle=oracle, eta=eta)
            assert res.certified and np.array_equal(res.w, want), (trial, oracle)


def test_rspm_estimator_default_oracle_equals_brute_on_a_norm_bounded_space():
    rng = np.random.default_rng(3)
    for seed in range(6):
        X, y, _ = _random_problem(rng, 6, rspm_space(6))
        a = RSPMClassifier(2.0, space="norm2=2", feature_grid=1 / 3, random_state=seed,
                           classes=[-1, 1]).fit(X, y)
        b = RSPMClassifier(2.0, space="norm2=2", oracle="brute", feature_grid=1 / 3,
                           random_state=seed, classes=[-1, 1]).fit(X, y)
        assert np.array_equal(a.coef_, b.coef_) and (np.abs(a.coef_) > 0).sum() <= 2


def test_opdisc_on_the_compact_w_is_the_exact_argmin():
    rng = np.random.default_rng(4)
    space = parameter_space("auto", 6)
    K = space.enumerate_k()
    for trial in range(8):
        X, y, problem = _random_problem(rng, 6, space)
        eta = rng.normal(0, rng.choice([0.5, 5.0, 50.0]), size=7)
        errors = (np.sign(K @ X.T) != y[None, :]).sum(axis=1)
        objective = errors - space.pi_k(K) @ eta
        want = K[int(np.argmin(objective))]
        assert np.sort(objective)[1] - objective.min() > 1e-9  # a unique minimizer
        for oracle in ("brute", "highs"):
            res = opdisc(problem, 1.0, 1e-6, oracle=oracle, eta=eta)
            assert res.certified and np.array_equal(res.w, want), (trial, oracle)
    assert isinstance(Perturbation.from_eta(space, np.zeros(7)), Perturbation)


def test_a_huge_norm2_is_refused_before_the_data_are_read(tmp_path):
    """``--space norm2=1e12`` ran out of memory sizing W and blamed the table's distinct rows;
    1e9 hung, 1e4 ran past two minutes on a two-column table.  R above MAX_NORM2 is refused
    with the other options: one error line, exit 2, even when the data file does not exist."""
    import json as _json

    from typer.testing import CliRunner

    from oracledp._cli import app
    from oracledp.estimators._space_spec import MAX_NORM2

    assert check_space(f"norm2={MAX_NORM2}").norm2 == MAX_NORM2
    for spec in (f"norm2={MAX_NORM2 + 1}", "norm2=1e12", {"norm2": 1e9, "bound": 1}):
        with pytest.raises(ValueError, match=f"at most {MAX_NORM2}"):
            check_space(spec)
    schema = tmp_path / "s.json"
    schema.write_text(_json.dumps({"target": {"name": "y", "labels": ["no", "yes"]}, "columns": [
        {"name": "a", "type": "numeric", "lower": 0, "upper": 9, "step": 1}]}))
    for model in ("opdisc", "rspm"):
        res = CliRunner().invoke(app, ["fit", str(tmp_path / "absent.csv"), "--schema",
                                       str(schema), "--model", model, "--epsilon", "1",
                                       "--out", str(tmp_path / "m"), "--space", "norm2=1e12"])
        assert res.exit_code == 2, res.output
        assert f"at most {MAX_NORM2}" in res.output and "absent.csv" not in res.output
