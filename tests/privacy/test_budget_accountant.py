"""BudgetAccountant: one budget for a session; every fit reports to it.

* every estimator's and synthesizer's ``fit`` is wrapped and declares its budget before its
  mechanism: an accountant with too little budget refuses each of them with BudgetError
  before any noise (their numpy Generator is untouched, nothing is charged);
* accepted fits add up (basic composition), 0.1 + 0.2 fits in 0.3, ``delta=None`` is declared
  as ``1/n**2`` once n is known;
* a fit that fails after its mechanism drew noise (an oracle that did not certify) is charged
  its declared budget; a fit refused by the mechanism's own checks before any draw is not;
* ex-post fits (Accuracy First) are pre-checked with their cap ``max_epsilon`` (refused
  without one) and charged their realised loss; a NoHaltError is charged its refusal's loss;
* a release whose guarantee does not hold exhausts the budget;
* zCDP composition adds rho of pure and zCDP releases and refuses (epsilon, delta) ones;
* records per person and add/remove releases are charged by group privacy;
* ``with`` blocks nest, ``set_default_accountant`` sets a process-wide default, fits in other
  threads report to it.
"""

from __future__ import annotations

import math
import threading
from typing import Any

import numpy as np
import pytest

from oracledp import BudgetError, NoHaltError, OracleFailure, PrivacyWarning
from oracledp.baselines import DPSGDLogisticRegression
from oracledp.erm import covnr
from oracledp.estimators import (
    AccuracyFirstLogisticRegression,
    AccuracyFirstRidge,
    OPDiscClassifier,
    OPSampClassifier,
    RSPMClassifier,
)
from oracledp.estimators._base import PrivateEstimator
from oracledp.privacy import (
    BudgetAccountant,
    PrivacyGuarantee,
    active_accountant,
    group_privacy,
    set_default_accountant,
    zcdp_epsilon,
    zcdp_rho,
)
from oracledp.privacy._group import group_loss
from oracledp.synth import (
    AIMSynthesizer,
    Domain,
    IndependentMarginalsSynthesizer,
    MSTSynthesizer,
    MWEMSynthesizer,
    OracleQueryPGM,
    OracleQuerySynthesizer,
    Synthesizer,
)

# six rows on the grid 1/2, two features: the brute-force oracle solves them exactly
X = np.array([[2, 1], [1, 2], [2, 2], [-2, -1], [-1, -2], [-2, 0]] * 2) / 2
Y = np.array([1, 1, 1, 0, 0, 0] * 2)
XR = np.array([[0.5, 0.25], [0.25, 0.5], [0.5, 0.5], [-0.5, -0.25], [-0.25, -0.5], [-0.5, 0.0]])
DOM = Domain(("a", "b", "c"), ((0, 1), (0, 1, 2), ("x", "y")))
CODES = np.random.default_rng(3).integers(0, [2, 3, 2], size=(60, 3))


def _state(gen: np.random.Generator) -> Any:
    return gen.bit_generator.state, gen.bit_generator.seed_seq.n_children_spawned


def _rspm(eps: float = 1.0, rs: Any = 0) -> RSPMClassifier:
    return RSPMClassifier(eps, oracle="brute", feature_grid=0.5, random_state=rs)


# one fast configuration of every estimator and synthesizer, with (epsilon, delta) declared
def _estimators(gen: np.random.Generator) -> list[tuple[Any, tuple[Any, ...]]]:
    return [
        (OPDiscClassifier(1.0, 1e-6, oracle="brute", feature_grid=0.5, random_state=gen), (X, Y)),
        (RSPMClassifier(1.0, oracle="brute", feature_grid=0.5, random_state=gen), (X, Y)),
        (OPSampClassifier(1.0, 1e-6, m=2, random_state=gen), (X, Y)),
        (DPSGDLogisticRegression(1.0, 1e-6, epochs=1, random_state=gen), (X, Y)),
        (AccuracyFirstRidge(0.5, max_epsilon=1e5, random_state=gen), (XR, XR.sum(axis=1))),
        (AccuracyFirstLogisticRegression(0.5, max_epsilon=1e5, random_state=gen), (XR, Y[:6])),
        (IndependentMarginalsSynthesizer(1.0, random_state=gen), (CODES, DOM)),
        (MWEMSynthesizer(1.0, k=2, rounds=2, random_state=gen), (CODES, DOM)),
        (OracleQuerySynthesizer(1.0, 1e-6, k=2, max_rounds=2, random_state=gen), (CODES, DOM)),
        (OracleQueryPGM(1.0, 1e-6, k=2, rounds=2, random_state=gen), (CODES, DOM)),
        (MSTSynthesizer(1.0, random_state=gen), (CODES, DOM)),
        (AIMSynthesizer(1.0, k=2, random_state=gen), (CODES, DOM)),
    ]


_NAMES = ["opdisc", "rspm", "opsamp", "dpsgd", "af-ridge", "af-logistic", "independent", "mwem",
          "oracle-query", "oracle-query-pgm", "mst", "aim"]


def _subclasses(cls: type) -> set[type]:
    out = set()
    for sub in cls.__subclasses__():
        out |= {sub, *_subclasses(sub)}
    return out


def test_every_fit_is_accounted() -> None:
    # (the lazy synthesizer modules are imported at the top of this file: every class exists)

    classes = _subclasses(PrivateEstimator) | _subclasses(Synthesizer)
    assert len(classes) >= 12
    for cls in classes:
        if "fit" in cls.__dict__:
            assert getattr(cls.fit, "__accounted__", False), cls
    for cls in (OPDiscClassifier, AccuracyFirstRidge, DPSGDLogisticRegression, MSTSynthesizer):
        assert getattr(cls.fit, "__accounted__", False), cls


@pytest.mark.parametrize("index", range(12), ids=_NAMES)
def test_every_fit_is_refused_before_any_noise(index: int) -> None:
    gen = np.random.default_rng(11)
    est, args = _estimators(gen)[index]
    before = _state(gen)
    with BudgetAccountant(0.5, 1e-3) as acct:
        with pytest.raises(BudgetError, match="refused before any noise"):
            est.fit(*args)
    assert _state(gen) == before  # not one draw
    assert acct.spends == () and acct.spent == (0.0, 0.0)
    assert not hasattr(est, "coef_") and not hasattr(est, "guarantee_")


@pytest.mark.parametrize("index", range(12), ids=_NAMES)
def test_every_fit_is_charged_its_guarantee(index: int, short_peer_estimation: None) -> None:
    est, args = _estimators(np.random.default_rng(11))[index]
    with BudgetAccountant(1e6, 1e-3) as acct:  # (tiny data: Accuracy First pays thousands)
        est.fit(*args)
    (charge,) = acct.spends
    g = est.guarantee_
    assert charge.guarantee == g and charge.status == "released"
    assert (charge.epsilon, charge.delta) == (g.epsilon, g.delta)  # replace-one, per record
    assert type(est).__name__ in charge.label
    assert acct.spent == (g.epsilon, g.delta)


def test_fits_add_up_and_the_next_one_is_refused() -> None:
    with BudgetAccountant(0.3) as acct:
        _rspm(0.1).fit(X, Y)
        _rspm(0.2, 1).fit(X, Y)  # 0.1 + 0.2 is 0.30000000000000004 in floating point: it fits
        gen = np.random.default_rng(0)
        before = _state(gen)
        late = _rspm(0.01, gen)
        with pytest.raises(BudgetError, match=r"only epsilon 0, .*2 release\(s\) charged"):
            late.fit(X, Y)
        assert _state(gen) == before and not hasattr(late, "coef_")
    assert acct.spent == (pytest.approx(0.3), 0.0)
    assert [c.epsilon for c in acct.spends] == [0.1, 0.2]
    assert acct.remaining == (0.0, 0.0)
    assert "spent (0.3, 0) in 2 release(s)" in acct.describe()


def test_delta_none_is_declared_once_n_is_known() -> None:
    est = OPDiscClassifier(1.0, oracle="brute", feature_grid=0.5, random_state=0)
    with BudgetAccountant(5.0) as acct:  # no total delta: an approximate fit cannot run
        with pytest.raises(BudgetError, match=r"delta 0\.00694"):  # 1/12**2
            est.fit(X, Y)
    with BudgetAccountant(5.0, 0.01) as acct:
        est.fit(X, Y)
    assert acct.spent == (1.0, 1 / 144)


def test_failure_after_the_noise_is_charged(uncertified_oracle: Any) -> None:
    est = OPDiscClassifier(0.7, 1e-4, oracle=uncertified_oracle, feature_grid=0.5, random_state=0)
    with BudgetAccountant(1.0, 1e-3) as acct:
        with pytest.raises(OracleFailure):
            est.fit(X, Y)
        (charge,) = acct.spends
        assert (charge.epsilon, charge.delta) == (0.7, 1e-4)
        assert "failed after its mechanism started (OracleFailure)" in charge.status
        with pytest.raises(BudgetError):  # 0.7 + 0.7 > 1
            est.fit(X, Y)
    assert len(acct.spends) == 1


def test_refusals_before_any_draw_are_not_charged() -> None:
    with BudgetAccountant(100.0, 1e-3) as acct:
        with pytest.raises(ValueError, match="exactly 2 classes"):  # data check, before begin
            _rspm().fit(X, np.zeros(12))
        # max_epsilon below the smallest loss: refused by the mechanism's own (public) checks
        # after the fit declared its budget, but before any draw
        with pytest.raises(ValueError, match="below the smallest ex-post loss"):
            AccuracyFirstRidge(0.5, max_epsilon=1e-3, random_state=0).fit(XR, XR.sum(axis=1))
    assert acct.spends == () and acct.spent == (0.0, 0.0)


def test_ex_post_fits_are_capped_then_charged_their_realised_loss() -> None:
    Xn, yn = _ridge_data()
    with BudgetAccountant(600.0) as acct:
        with pytest.raises(BudgetError, match="set max_epsilon"):
            AccuracyFirstRidge(0.5, random_state=0).fit(Xn, yn)  # no cap: refused
        with pytest.raises(BudgetError, match="would spend epsilon 700"):
            AccuracyFirstRidge(0.5, max_epsilon=700.0, random_state=0).fit(Xn, yn)
        est = AccuracyFirstRidge(0.5, max_epsilon=400.0, random_state=0).fit(Xn, yn)
    (charge,) = acct.spends
    assert charge.epsilon == est.epsilon_ == est.guarantee_.epsilon < 400.0
    assert charge.guarantee.kind == "ex-post" and acct.spent == (est.epsilon_, 0.0)


def _ridge_data() -> tuple[Any, Any]:
    rng = np.random.default_rng(4)
    Xn = rng.uniform(-1, 1, size=(300, 4)) / 4
    return Xn, np.clip(Xn @ rng.normal(size=4), -1, 1)


def test_no_halt_refusal_is_charged_its_ex_post_loss() -> None:
    Xn, yn = _ridge_data()
    tiny = [1e-9, 2e-9, 4e-9]
    with pytest.raises(NoHaltError) as exc:
        covnr(Xn, yn, 0.002, random_state=0, eps_list=tiny)
    loss = exc.value.epsilon_refusal
    with BudgetAccountant(2 * loss) as acct:
        with pytest.raises(NoHaltError):
            AccuracyFirstRidge(0.002, eps_list=tiny, max_epsilon=1.5 * loss,
                               random_state=0).fit(Xn, yn)
    (charge,) = acct.spends
    assert charge.epsilon == pytest.approx(loss, rel=1e-12) and "NoHaltError" in charge.status


def test_a_release_without_a_guarantee_exhausts_the_budget(uncertified_oracle: Any) -> None:
    est = OPDiscClassifier(0.1, 1e-6, oracle=uncertified_oracle, feature_grid=0.5,
                           allow_uncertified=True, random_state=0)
    with BudgetAccountant(10.0, 1e-3) as acct:
        with pytest.warns(PrivacyWarning, match="NO differential privacy"):
            est.fit(X, Y)
        assert acct.spent[0] == math.inf and "WITHOUT a guarantee" in acct.spends[0].status
        with pytest.raises(BudgetError):
            _rspm(0.01).fit(X, Y)


def test_zcdp_composition() -> None:
    acct = BudgetAccountant(10.0, 1e-6, "zcdp")
    rho_total = zcdp_rho(10.0, 1e-6)
    fits = int(rho_total / (0.1**2 / 2))  # 270 pure 0.1-DP releases, where basic allows 100
    assert fits > 100
    with acct:
        for i in range(3):
            IndependentMarginalsSynthesizer(0.1, random_state=i).fit(CODES, DOM)
        pgm = OracleQueryPGM(1.0, 1e-6, k=2, rounds=2, random_state=0).fit(CODES, DOM)
        with pytest.raises(BudgetError, match="not a pure or zCDP release"):
            _fit_opdisc(0.1)
    rho = 3 * 0.1**2 / 2 + pgm.rho_
    assert acct.spent_rho == pytest.approx(rho, rel=1e-12)
    assert acct.spent == (zcdp_epsilon(acct.spent_rho, 1e-6), 1e-6)
    for _ in range(fits - 3 - 24):
        acct.check(0.1)
    with pytest.raises(ValueError, match="total_delta > 0"):
        BudgetAccountant(1.0, composition="zcdp")


def _fit_opdisc(eps: float) -> OPDiscClassifier:
    return OPDiscClassifier(eps, 1e-6, oracle="brute", feature_grid=0.5, random_state=0).fit(X, Y)


def test_groups_and_add_remove_are_charged_by_group_privacy() -> None:
    with BudgetAccountant(10.0, 1e-3, records_per_person=3) as acct:
        _rspm(0.5).fit(X, Y)
        _fit_opdisc(0.5)
        with pytest.raises(BudgetError, match="per person"):
            _rspm(3.0).fit(X, Y)  # 3 x 3 > 10 - 3
    pure, approx = acct.spends
    assert pure.epsilon == 1.5 and pure.guarantee.epsilon == 0.5
    assert (approx.epsilon, approx.delta) == group_loss(0.5, 1e-6, 3)
    acct = BudgetAccountant(10.0, 1e-3)
    # an add/remove statement: a replacement is a removal and an addition (group of 2)
    assert acct.check(1.0, 1e-5, neighbouring="add-remove") == group_loss(1.0, 1e-5, 2)
    with pytest.raises(BudgetError, match="stated for"):
        acct.check(1.0, neighbouring="something else")


def test_learner_functions_are_charged_by_hand() -> None:
    acct = BudgetAccountant(1.0)
    acct.check(0.6)
    acct.charge(PrivacyGuarantee.pure(0.6, source="a function"), label="mwem()")
    with pytest.raises(BudgetError, match=r"mwem\(\) again"):
        acct.check(0.6, label="mwem() again")
    assert acct.spent == (0.6, 0.0) and acct.spends[0].label == "mwem()"


def test_activation_blocks_nest_and_the_default_applies_outside() -> None:
    outer, inner, default = BudgetAccountant(5.0), BudgetAccountant(5.0), BudgetAccountant(5.0)
    assert active_accountant() is None
    previous = set_default_accountant(default)
    try:
        with outer:
            with inner:
                _rspm(0.5).fit(X, Y)
            _rspm(0.25).fit(X, Y)
        _rspm(0.125).fit(X, Y)
        with pytest.raises(RuntimeError, match="reverse order"):
            outer.__enter__()
            inner.__enter__()
            outer.__exit__(None, None, None)
    finally:
        inner.__exit__(None, None, None)
        outer.__exit__(None, None, None)
        set_default_accountant(previous)
    assert [a.spent[0] for a in (outer, inner, default)] == [0.25, 0.5, 0.125]
    assert active_accountant() is None
    with pytest.raises(TypeError):
        set_default_accountant(object())  # type: ignore[arg-type]


def test_fits_in_other_threads_report_to_the_process_accountant() -> None:
    with BudgetAccountant(1.0) as acct:
        errors: list[BaseException] = []

        def work(seed: int) -> None:
            try:
                _rspm(0.3, seed).fit(X, Y)
            except BaseException as exc:  # collected, checked below
                errors.append(exc)

        threads = [threading.Thread(target=work, args=(s,)) for s in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    # three 0.3 fits fit in 1.0, the fourth is refused whatever the interleaving
    assert len(acct.spends) == 3 and len(errors) == 1 and isinstance(errors[0], BudgetError)


def test_parameters_are_checked() -> None:
    with pytest.raises(ValueError, match="total_epsilon"):
        BudgetAccountant(0.0)
    with pytest.raises(ValueError, match="total_delta"):
        BudgetAccountant(1.0, 1.0)
    with pytest.raises(ValueError, match="composition"):
        BudgetAccountant(1.0, composition="advanced")
    with pytest.raises(ValueError, match="records_per_person"):
        BudgetAccountant(1.0, records_per_person=0)
    assert repr(BudgetAccountant(1.0, records_per_person=2)).endswith("records_per_person=2)")


def test_group_statement_of_a_guarantee_matches_the_accountant() -> None:
    g = PrivacyGuarantee.approximate(0.5, 1e-6, source="x")
    acct = BudgetAccountant(10.0, 1e-3, records_per_person=4)
    assert acct.check(0.5, 1e-6) == (group_privacy(g, 4).epsilon, group_privacy(g, 4).delta)
