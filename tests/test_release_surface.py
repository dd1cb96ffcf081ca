"""What a fitted model or a result reveals.

A release carries only what its guarantee covers: the released parameters, the public
configuration and the guarantee.  Data-dependent diagnostics (training loss, objective,
bound, gap, status, timings, excess risk, regret, PRSMA's per-part outcomes...) live in a
:class:`~oracledp._diagnostics.NonPrivateDiagnostics` that is absent by default, warns and
flags the guarantee when asked for, and is never pickled with an estimator.

The tests walk the public API:

* every estimator is fitted on two neighbouring datasets (one record replaced) with the
  same seed and pickled: the bytes may differ only where the released parameters differ
  (byte-identical pickles when they are equal; otherwise identical once the released
  arrays are replaced by a placeholder), with and without ``keep_diagnostics``;
* every learner function's result holds no diagnostics (recursively) unless asked for, is
  identical on neighbouring inputs outside its released fields, and is identical on two
  runs with the same seed (no timings);
* opting in issues a DiagnosticsWarning (a PrivacyWarning) and sets
  ``guarantee.diagnostics_released``.
"""

from __future__ import annotations

import copy
import dataclasses
import pickle
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from oracledp._diagnostics import NonPrivateDiagnostics
from oracledp._errors import DiagnosticsWarning, PrivacyWarning
from oracledp.baselines import DPSGDLogisticRegression, dpsgd_logistic
from oracledp.erm import covnr, doubling, outputnr
from oracledp.estimators import (
    AccuracyFirstLogisticRegression,
    AccuracyFirstRidge,
    OPDiscClassifier,
    OPSampClassifier,
    RSPMClassifier,
)
from oracledp.learners._ftpl import ftpl
from oracledp.learners._opdisc import opdisc
from oracledp.learners._opsamp import opsamp
from oracledp.learners._prsma import ExplicitRSPMBase, prsma
from oracledp.learners._rspm import rspm, rspm_space
from oracledp.learners._rspm_class import rspm_class
from oracledp.oracles import HalfspaceProblem, IntegerBall
from oracledp.oracles._base import OracleResult
from oracledp.oracles._convex import ApproxOracleResult, LogisticLinearOracle
from oracledp.privacy._guarantees import PrivacyGuarantee
from oracledp.query_classes import MonotoneConjunctions
from oracledp.query_classes._base import ClassOracleResult
from oracledp.synth import Domain, independent_marginals, kway_marginal_workload, mwem
from oracledp.synth._oracle_query import OracleQuerySynthesizer

RELEASED = "<released>"

#: Names of data-dependent diagnostics that no default release may hold, at any depth.
DIAGNOSTIC_NAMES = frozenset({
    "loss", "objective", "gap", "wall_time", "status", "inner_solves", "timings",
    "excess_risk", "theta_star", "losses", "cumulative_losses", "best_params",
    "best_cumulative_loss", "regret", "regret_total", "regret_curve", "n_passing",
    "part_passed", "chosen_part", "count_noise", "time_parts_s", "time_total_s", "seconds",
    "fit_seconds", "fit_seconds_", "search", "oracle", "oracle_status", "oracle_status_",
    "diagnostics_",
})  # ("bound" is also a public parameter name; an oracle's bound is caught by its type;
#     "oracle" is also the exact-oracle estimators' parameter: see _public_parameter)
DIAGNOSTIC_TYPES = (NonPrivateDiagnostics, OracleResult, ClassOracleResult, ApproxOracleResult)


# ================================================================================================
# Helpers
# ================================================================================================
def _public_parameter(obj: Any, name: str) -> bool:
    """``name`` is a constructor parameter of the estimator ``obj`` (public configuration, such
    as ``oracle="brute"``): its name is no diagnostic, and its value is still walked."""
    get_params = getattr(obj, "get_params", None)
    return callable(get_params) and name in get_params(deep=False)


def _walk(obj: Any, path: str = "result", seen: set[int] | None = None) -> list[str]:
    """Paths of diagnostic names or objects reachable from ``obj`` (dataclass fields, instance
    attributes, dicts, sequences)."""
    seen = set() if seen is None else seen
    if id(obj) in seen or isinstance(obj, (str, bytes, int, float, bool, np.ndarray,
                                           np.generic, type(None))):
        return []
    seen.add(id(obj))
    if isinstance(obj, DIAGNOSTIC_TYPES):
        return [f"{path} ({type(obj).__name__})"]
    found: list[str] = []
    items: list[tuple[str, Any]] = []
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        items = [(f.name, getattr(obj, f.name)) for f in dataclasses.fields(obj)]
        if isinstance(obj, PrivacyGuarantee):
            return []
    elif isinstance(obj, dict):
        items = [(str(k), v) for k, v in obj.items()]
    elif isinstance(obj, (list, tuple)):
        return [p for i, v in enumerate(obj) for p in _walk(v, f"{path}[{i}]", seen)]
    elif hasattr(obj, "__dict__") and type(obj).__module__.startswith("oracledp"):
        items = list(vars(obj).items())
    for name, value in items:
        if ((name in DIAGNOSTIC_NAMES and not _public_parameter(obj, name))
                or (name == "diagnostics" and value is not None)):
            found.append(f"{path}.{name}")
        found += _walk(value, f"{path}.{name}", seen)
    return found


def _redacted(obj: Any, fields: tuple[str, ...]) -> Any:
    """``obj`` with its released ``fields`` replaced by a placeholder (dataclass or dict)."""
    if isinstance(obj, dict):
        return {k: (RELEASED if k in fields else v) for k, v in obj.items()}
    return dataclasses.replace(obj, **dict.fromkeys(fields, RELEASED))


def _estimator_bytes(est: Any, attrs: tuple[str, ...], result_fields: tuple[str, ...]) -> bytes:
    """The pickled state with the released attributes (and result fields) as placeholders."""
    state = est.__getstate__()
    state = _redacted(state, attrs)
    if result_fields:
        state["result_"] = _redacted(state["result_"], result_fields)
    return pickle.dumps(state)


def _assert_no_diagnostics_pickled(est: Any) -> None:
    data = pickle.dumps(est)
    assert b"NonPrivateDiagnostics" not in data and b"OracleResult" not in data
    back = pickle.loads(data)
    assert not hasattr(back, "diagnostics_") and _walk(back, "estimator") == []
    assert not hasattr(copy.deepcopy(est), "diagnostics_")


# ================================================================================================
# Estimators: pickles on neighbouring datasets
# ================================================================================================
# Tiny exact-oracle data (the reproduction that showed a fitted model carrying its training
# error count): flipping the last label keeps the released w for some seeds, while the training
# error count of w changes.
X_HALF = np.array([[1.0, 0.5], [0.5, -1.0], [-1.0, 1.0], [0.25, 0.25], [1.0, 1.0], [-0.5, 0.5]])
Y_HALF = np.array([1, 1, -1, -1, 1, -1])
Y_HALF2 = np.where(np.arange(6) == 5, 1, Y_HALF)


@pytest.mark.parametrize("cls", [OPDiscClassifier, RSPMClassifier])
@pytest.mark.parametrize("keep", [False, True])
def test_exact_oracle_classifiers_pickle_only_the_model(cls: type, keep: bool) -> None:
    """Same seed, neighbouring data: equal coef_ => byte-identical pickles (with or without
    keep_diagnostics, whose diagnostics_ read the changed training loss but are not pickled)."""
    equal_seeds, loss_changed = 0, False
    for seed in range(6):
        fits = []
        for y in (Y_HALF, Y_HALF2):
            est = cls(epsilon=1.0, oracle="brute", feature_grid=0.25, classes=[-1, 1],
                      keep_diagnostics=keep, random_state=seed)
            if keep:
                with pytest.warns(DiagnosticsWarning):
                    est.fit(X_HALF, y)
                assert est.guarantee_.diagnostics_released
                _assert_no_diagnostics_pickled(est)
            else:
                est.fit(X_HALF, y)
                assert not hasattr(est, "diagnostics_") and not hasattr(est, "oracle_status_")
                assert _walk(est, "estimator") == []
            fits.append(est)
        a, b = fits
        if np.array_equal(a.coef_, b.coef_):
            equal_seeds += 1
            assert pickle.dumps(a) == pickle.dumps(b)
            if keep:
                loss_changed |= a.diagnostics_["oracle"].loss != b.diagnostics_["oracle"].loss
        assert _estimator_bytes(a, ("coef_",), ("w",)) == _estimator_bytes(b, ("coef_",), ("w",))
    assert equal_seeds >= 2
    if keep:  # the in-memory diagnostics do tell the neighbours apart: that is what is at stake
        assert loss_changed


def _ball_data(n: int, d: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, d))
    X *= 0.99 / np.maximum(1.0, np.abs(X).sum(axis=1, keepdims=True))  # ||x||_1 < 1
    y = np.where(X @ np.arange(1, d + 1) + 0.2 * rng.normal(size=n) > 0, 1, -1)
    return X, y


def _replace_first(X: np.ndarray, y: np.ndarray, x: Any, label: Any) -> tuple[Any, Any]:
    X2, y2 = X.copy(), y.copy()
    X2[0], y2[0] = x, label
    return X2, y2


CONTINUOUS = [
    pytest.param(lambda keep: DPSGDLogisticRegression(
        epsilon=1.0, epochs=2, keep_diagnostics=keep, random_state=3),
        ("coef_", "intercept_"), ("coef", "intercept"), id="DPSGDLogisticRegression"),
    pytest.param(lambda keep: OPSampClassifier(
        epsilon=1.0, m=5, keep_diagnostics=keep, random_state=3),
        ("coef_",), ("w",), id="OPSampClassifier"),
    pytest.param(lambda keep: AccuracyFirstLogisticRegression(
        0.05, eps_list=(0.01, 50.0, 60), keep_diagnostics=keep, random_state=3),
        ("coef_",), ("theta",), id="AccuracyFirstLogisticRegression"),
    pytest.param(lambda keep: AccuracyFirstLogisticRegression(
        0.05, method="doubling", keep_diagnostics=keep, random_state=3),
        ("coef_",), ("theta",), id="AccuracyFirstLogisticRegression-doubling"),
    pytest.param(lambda keep: AccuracyFirstRidge(
        0.05, eps_list=(0.01, 50.0, 60), keep_diagnostics=keep, random_state=3),
        ("coef_",), ("theta",), id="AccuracyFirstRidge"),
    pytest.param(lambda keep: AccuracyFirstRidge(
        0.05, method="doubling", keep_diagnostics=keep, random_state=3),
        ("coef_",), ("theta",), id="AccuracyFirstRidge-doubling"),
]


@pytest.mark.filterwarnings(r"ignore:.*above 10 \(the cap the command line:oracledp._errors.PrivacyWarning")
@pytest.mark.parametrize("make,attrs,fields", CONTINUOUS)
@pytest.mark.parametrize("keep", [False, True])
def test_continuous_estimators_pickle_only_the_model(
    make: Callable[[bool], Any], attrs: tuple[str, ...], fields: tuple[str, ...], keep: bool
) -> None:
    """Same seed, one record replaced: the pickles agree once the released parameters are
    replaced by a placeholder (the stopping level of Accuracy First, part of its release, is
    the same on these neighbours)."""
    X, y = _ball_data(200, 3, seed=1)
    ridge = isinstance(make(False), AccuracyFirstRidge)
    if ridge:
        y = y * 0.5
    X2, y2 = _replace_first(X, y, [0.0, 0.0, -0.5], -y[0])
    fits = []
    for data in ((X, y), (X2, y2)):
        est = make(keep)
        if keep:
            with pytest.warns(DiagnosticsWarning):
                est.fit(*data)
            assert est.guarantee_.diagnostics_released
            assert isinstance(est.diagnostics_, NonPrivateDiagnostics)
            _assert_no_diagnostics_pickled(est)
        else:
            est.fit(*data)
            assert not hasattr(est, "diagnostics_") and not est.guarantee_.diagnostics_released
            assert _walk(est, "estimator") == []
        fits.append(est)
    a, b = fits
    if hasattr(a, "stopping_index_"):
        assert a.stopping_index_ == b.stopping_index_
    if np.array_equal(a.coef_, b.coef_):  # OPSamp: every answer at the same corner of the box
        assert pickle.dumps(a) == pickle.dumps(b)
    assert _estimator_bytes(a, attrs, fields) == _estimator_bytes(b, attrs, fields)
    # same data, same seed: identical pickles (no timings anywhere)
    again = make(keep)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DiagnosticsWarning)
        again.fit(X, y)
    assert pickle.dumps(again) == pickle.dumps(a)


# ================================================================================================
# Learner functions: results on neighbouring inputs
# ================================================================================================
def _halfspace(y: np.ndarray, space: IntegerBall) -> HalfspaceProblem:
    return HalfspaceProblem.from_data(X_HALF, y, space)


def _logistic_problem(X: np.ndarray, y: np.ndarray) -> Any:
    return LogisticLinearOracle("box", 1.0).problem(X, y)


X_BALL, Y_BALL = _ball_data(150, 3, seed=2)
X_BALL2, Y_BALL2 = _replace_first(X_BALL, Y_BALL, [0.5, 0.0, 0.0], -Y_BALL[0])
PRSMA_BASE = ExplicitRSPMBase(np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([[1.0], [0.0]]))
PRSMA_D = np.array([0] * 200 + [1] * 140)
PRSMA_D2 = np.where(np.arange(340) == 0, 1, PRSMA_D)
LOSS2 = MonotoneConjunctions(2).zero_one_loss()
STREAM = np.array([[1, 1, 1], [0, 1, 0], [1, 0, 0], [1, 1, 1], [0, 0, 0]], dtype=float)
STREAM2 = np.where(np.arange(5)[:, None] == 1, [[1.0, 1.0, 0.0]], STREAM)
DOMAIN = Domain(("a", "b", "c"), ((0, 1), (0, 1, 2), (0, 1)))
CODES = np.random.default_rng(4).integers(0, 2, size=(300, 3))
CODES2 = np.where(np.arange(300)[:, None] == 0, [[1, 2, 0]], CODES)
WORKLOAD = kway_marginal_workload(DOMAIN, 2)

# name -> (run(data, seed, **kw), data D, data D', released fields)
LEARNERS: dict[str, tuple[Callable[..., Any], Any, Any, tuple[str, ...]]] = {
    "opdisc": (lambda y, s, **kw: opdisc(_halfspace(y, IntegerBall(2)), 1.0, 1e-3,
                                         oracle="brute", random_state=s, **kw),
               Y_HALF, Y_HALF2, ("w",)),
    "rspm": (lambda y, s, **kw: rspm(_halfspace(y, rspm_space(2)), 1.0, oracle="brute",
                                     random_state=s, **kw),
             Y_HALF, Y_HALF2, ("w",)),
    "rspm_class": (lambda y, s, **kw: rspm_class(LOSS2, LOSS2.encode(X_HALF > 0, y > 0), None,
                                                 1.0, oracle="brute", random_state=s, **kw),
                   Y_HALF, Y_HALF2, ("params",)),
    "opsamp": (lambda d, s, **kw: opsamp(_logistic_problem(*d), 1.0, 1e-5, m=4,
                                         oracle=LogisticLinearOracle("box", 1.0),
                                         random_state=s, **kw),
               (X_BALL, Y_BALL), (X_BALL2, Y_BALL2), ("w",)),
    "dpsgd_logistic": (lambda d, s, **kw: dpsgd_logistic(*d, 1.0, epochs=2, random_state=s, **kw),
                       (X_BALL, Y_BALL), (X_BALL2, Y_BALL2), ("coef", "intercept")),
    "covnr": (lambda d, s, **kw: covnr(d[0], d[1] * 0.5, 0.05, eps_list=(0.01, 50.0, 60),
                                       random_state=s, **kw),
              (X_BALL, Y_BALL), (X_BALL2, Y_BALL2), ("theta",)),
    "outputnr": (lambda d, s, **kw: outputnr(*d, 0.05, eps_list=(0.01, 50.0, 60),
                                             random_state=s, **kw),
                 (X_BALL, Y_BALL), (X_BALL2, Y_BALL2), ("theta",)),
    "doubling": (lambda d, s, **kw: doubling(*d, 0.05, task="logistic", random_state=s, **kw),
                 (X_BALL, Y_BALL), (X_BALL2, Y_BALL2), ("theta",)),
    "prsma": (lambda d, s, **kw: prsma(d, PRSMA_BASE, 3.5, 0.5, random_state=s, **kw),
              PRSMA_D, PRSMA_D2, ("output", "failed")),
    "ftpl": (lambda z, s, **kw: ftpl(LOSS2, z, 0.5, random_state=s, **kw), STREAM, STREAM2,
             ("plays",)),
    "mwem": (lambda c, s, **kw: mwem(c, DOMAIN, WORKLOAD, 1.0, 5, s, **kw),
             CODES, CODES2, ("distribution", "selected", "measurements")),
}


def _guarantees(res: Any) -> list[PrivacyGuarantee]:
    if hasattr(res, "guarantee"):
        return [res.guarantee]
    p = res.privacy  # FTPL
    return [g for g in (p.per_round, p.reported, p.advanced) if g is not None]


@pytest.mark.parametrize("name", list(LEARNERS))
def test_learner_results_carry_no_diagnostics_by_default(name: str) -> None:
    run, d, d2, released = LEARNERS[name]
    a, b, again = run(d, 7), run(d2, 7), run(d, 7)
    for res in (a, b):
        assert res.diagnostics is None
        assert not any(g.diagnostics_released for g in _guarantees(res))
        assert _walk(res) == []
    # everything but the released fields is the same on neighbouring inputs ...
    assert pickle.dumps(_redacted(a, released)) == pickle.dumps(_redacted(b, released))
    # ... and two runs with the same seed are identical, bytes included (no timings)
    assert pickle.dumps(again) == pickle.dumps(a)


@pytest.mark.parametrize("name", list(LEARNERS))
def test_learner_diagnostics_only_on_request(name: str) -> None:
    run, d, _, released = LEARNERS[name]
    plain = run(d, 7)
    with pytest.warns(DiagnosticsWarning, match="NOT covered") as record:
        res = run(d, 7, return_diagnostics=True)
    assert all(issubclass(w.category, PrivacyWarning) for w in record)
    assert isinstance(res.diagnostics, NonPrivateDiagnostics)
    assert res.diagnostics.private is False
    assert "NOT differentially private" in repr(res.diagnostics)
    assert "NOT differentially private" in (NonPrivateDiagnostics.__doc__ or "")
    assert all(g.diagnostics_released for g in _guarantees(res))
    assert "non-private diagnostics released" in _guarantees(res)[0].describe()
    # the released output itself does not change
    for f in released:
        assert pickle.dumps(getattr(res, f)) == pickle.dumps(getattr(plain, f))
    with pytest.raises(TypeError, match="return_diagnostics must be a bool"):
        run(d, 7, return_diagnostics="yes")


def test_independent_marginals_result_is_the_release() -> None:
    a = independent_marginals(CODES, DOMAIN, 1.0, 5)
    b = independent_marginals(CODES2, DOMAIN, 1.0, 5)
    assert _walk(a) == []
    fields = ("marginals", "noisy_counts")
    assert pickle.dumps(_redacted(a, fields)) == pickle.dumps(_redacted(b, fields))


def test_oracle_query_synthesizer_keeps_no_diagnostics() -> None:
    def fit(codes: np.ndarray, keep: bool) -> OracleQuerySynthesizer:
        return OracleQuerySynthesizer(1.0, 1e-6, k=2, rounds=4, random_state=9,
                                      keep_diagnostics=keep).fit(codes, DOMAIN)

    a, b = fit(CODES, False), fit(CODES2, False)
    assert not hasattr(a, "fit_seconds_") and not hasattr(a, "diagnostics_")
    assert _walk(a, "synthesizer") == [] and not a.guarantee_.diagnostics_released
    released = ("distribution_", "ledger_")
    assert pickle.dumps(_redacted(a.__getstate__(), released)) == pickle.dumps(
        _redacted(b.__getstate__(), released))
    assert pickle.dumps(fit(CODES, False)) == pickle.dumps(a)  # no timings
    with pytest.warns(DiagnosticsWarning):
        kept = fit(CODES, True)
    assert kept.guarantee_.diagnostics_released and kept.diagnostics_["fit_seconds"] >= 0
    _assert_no_diagnostics_pickled(kept)
    np.testing.assert_array_equal(kept.distribution_, a.distribution_)


def test_keep_diagnostics_is_validated_before_any_randomness() -> None:
    gen = np.random.default_rng(0)
    state = gen.bit_generator.state
    for est in (OPDiscClassifier(oracle="brute", feature_grid=0.25, random_state=gen,
                                 keep_diagnostics=1),
                DPSGDLogisticRegression(random_state=gen, keep_diagnostics="no")):
        with pytest.raises(TypeError, match="keep_diagnostics must be a bool"):
            est.fit(X_HALF, Y_HALF)
    assert gen.bit_generator.state == state


def test_guarantee_flag_round_trips() -> None:
    g = LEARNERS["opdisc"][0](Y_HALF, 0).guarantee
    flagged = g.with_diagnostics_released()
    assert flagged.diagnostics_released and not g.diagnostics_released
    assert flagged.to_dict()["diagnostics_released"] is True
    assert flagged.not_holding("test").diagnostics_released  # kept when marked not holding
    assert PrivacyGuarantee(**flagged.to_dict()) == flagged


# ================================================================================================
# The seed is a key to the noise: a fitted model's pickle never carries it
# ================================================================================================
@pytest.mark.parametrize("make", [
    lambda rs: OPDiscClassifier(epsilon=1.0, oracle="brute", feature_grid=0.25, random_state=rs),
    lambda rs: RSPMClassifier(epsilon=1.0, oracle="brute", feature_grid=0.25, random_state=rs),
    lambda rs: DPSGDLogisticRegression(epsilon=1.0, random_state=rs),
])
@pytest.mark.parametrize("seed", [3, np.random.SeedSequence(3), "generator"])
def test_fitted_pickle_drops_the_seed(make: Callable[[Any], Any], seed: Any) -> None:
    rs = np.random.default_rng(3) if seed == "generator" else seed
    est = make(rs)
    assert pickle.loads(pickle.dumps(est)).random_state is not None  # unfitted: kept for clones
    est.fit(X_HALF, Y_HALF)
    back = pickle.loads(pickle.dumps(est))
    assert back.random_state is None and est.random_state is rs  # the live object is unchanged
    np.testing.assert_array_equal(back.predict(X_HALF), est.predict(X_HALF))
    assert back.random_state is None and copy.deepcopy(est).random_state is None


def test_unpickled_synthesizer_needs_an_explicit_sampling_seed() -> None:
    synth = OracleQuerySynthesizer(1.0, 1e-6, k=2, rounds=4, random_state=9).fit(CODES, DOMAIN)
    back = pickle.loads(pickle.dumps(synth))
    assert not hasattr(back, "_rng") and back.random_state is None
    with pytest.raises(ValueError, match="random_state"):
        back.sample_codes(5)
    np.testing.assert_array_equal(back.sample_codes(5, random_state=1),
                                  synth.sample_codes(5, random_state=1))
    assert synth.sample_codes(5).shape == (5, len(DOMAIN.shape))
